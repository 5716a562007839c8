import { errorCode, errorMessage } from "../errors/index.ts";
import { EXIT_CODES, EXIT_UNCODED, EXIT_USAGE } from "./exit-codes.ts";
import { forTerminal } from "./render.ts";
import { UsageError, type Target } from "./target.ts";

/** What the CLI prints (one line on stderr) and exits with when a command fails. */
export interface Failure {
  line: string;
  exitCode: number;
  code: string | undefined;
}

/**
 * Turns any error into one line that names the OS and the likely cause, and its exit code.
 * `target` is absent when the failure came before the OS was resolved.
 */
export function describeFailure(error: unknown, target: Target | undefined): Failure {
  if (error instanceof UsageError) return { line: `iterate: ${error.message}`, exitCode: EXIT_USAGE, code: undefined };
  const code = errorCode(error);
  const message = oneLine(errorMessage(error));
  const url = target?.baseUrl ?? "the OS";
  const details = (error as { details?: { reason?: unknown } } | null)?.details;
  if (code === undefined) return { line: `iterate: ${message}`, exitCode: EXIT_UNCODED, code };
  let line: string;
  if (code === "UNAVAILABLE" && details?.reason === "unreachable") {
    line = target?.local
      ? `no OS answers at ${url}: is \`pnpm dev\` running? (or pass --base-url)`
      : `no OS answers at ${url}: is the URL right and the OS up?`;
  } else if (code === "UNAVAILABLE" && details?.reason === "connection-closed") {
    line = `the connection to ${url} closed: ${message}`;
  } else if (code === "UNAVAILABLE" && details?.reason === "runtime-too-old") {
    line = message;
  } else if (code === "UNAUTHENTICATED") {
    line = `${url} refused the credentials from ${target?.authSource ?? "this command"}: ${message} (run \`iterate login\`, or set ITERATE_ADMIN_SECRET or ITERATE_TOKEN)`;
  } else {
    line = `${code}: ${message}`;
  }
  return { line: `iterate: ${line}`, exitCode: EXIT_CODES[code], code };
}

function oneLine(text: string): string {
  return forTerminal(text.replace(/\s*\n\s*/g, " ").trim());
}
