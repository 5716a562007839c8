import { parseArgs } from "node:util";
import { connectItx } from "../client/connect-itx.ts";
import { errorCode, errorMessage } from "../errors/index.ts";
import type { Credentials } from "../types.ts";

const HELP = `iterate: talk to an iterate OS

usage: iterate <command> [--base-url URL]

commands:
  whoami      print the authenticated principal
  describe    print the session's __describe() answer as JSON

The OS comes from --base-url or ITERATE_BASE_URL (default http://127.0.0.1:8787).
Credentials come from ITERATE_ADMIN_SECRET (admin) or ITERATE_BEARER_TOKEN (bearer).
`;

/** Runs the CLI with `argv` (without node and the script); answers the exit code. */
export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { "base-url": { type: "string" }, help: { type: "boolean", short: "h" } },
    });
  } catch (error) {
    process.stderr.write(`${errorMessage(error)}\n\n${HELP}`);
    return 2;
  }
  const [command] = parsed.positionals;
  if (parsed.values.help || command === undefined) {
    process.stdout.write(HELP);
    return command === undefined && !parsed.values.help ? 2 : 0;
  }
  const baseUrl = parsed.values["base-url"] ?? process.env.ITERATE_BASE_URL ?? "http://127.0.0.1:8787";
  const auth = credentialsFromEnv();
  if (auth === undefined) {
    process.stderr.write("set ITERATE_ADMIN_SECRET or ITERATE_BEARER_TOKEN to authenticate\n");
    return 2;
  }
  const session = connectItx({ baseUrl, auth });
  try {
    switch (command) {
      case "whoami":
        process.stdout.write(`${JSON.stringify((await session.__describe()).principal)}\n`);
        return 0;
      case "describe":
        process.stdout.write(`${JSON.stringify(await session.__describe(), null, 2)}\n`);
        return 0;
      default:
        process.stderr.write(`unknown command ${JSON.stringify(command)}\n\n${HELP}`);
        return 2;
    }
  } catch (error) {
    process.stderr.write(`${errorCode(error) ?? "ERROR"}: ${errorMessage(error)}\n`);
    return 1;
  } finally {
    session[Symbol.dispose]();
  }
}

function credentialsFromEnv(): Credentials | undefined {
  const secret = process.env.ITERATE_ADMIN_SECRET;
  if (secret) return { type: "admin-secret", secret };
  const token = process.env.ITERATE_BEARER_TOKEN;
  if (token) return { type: "bearer", token };
  return undefined;
}
