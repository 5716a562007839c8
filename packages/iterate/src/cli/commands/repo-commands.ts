import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import type { Command } from "commander";
import { ItxError } from "../../errors/index.ts";
import type { CliContext } from "../cli-context.ts";
import { UsageError } from "../target.ts";

/**
 * `repo clone <slug>:<repo path> [directory]` and `repo credential <get|store|erase>`: a project's
 * repositories through stock git. The clone is configured with this CLI as its credential helper
 * (like `gh auth git-credential`), so later `git fetch`/`git push` authenticate the same way the
 * CLI does, and no secret is ever written into the clone or passed in an argument.
 */
export function registerRepoCommands(program: Command, ctx: CliContext): void {
  const repo = program.command("repo").description("a project's git repositories, through stock git (served at /git/<project>/<repo path>.git)");
  repo
    .command("clone")
    .description("git clone a repository; the clone asks this CLI for credentials on later fetches and pushes")
    .argument("<repo>", "<project slug>:<repo path>, e.g. my-project:/repos/site")
    .argument("[directory]", "where to clone to (git's default: the repository's name)")
    .action(async (spec: string, directory: string | undefined) => {
      const { project, path } = parseRepoSpec(spec);
      const { baseUrl, profile, auth, authSource } = ctx.target;
      if (auth === undefined) throw new UsageError(`no credentials for ${baseUrl}: run \`iterate login --base-url ${baseUrl}\`, or set ITERATE_ADMIN_SECRET or ITERATE_TOKEN`);
      const url = `${baseUrl}/git/${encodeURIComponent(project)}${path}.git`;
      // The empty helper first drops any helper from the user's global config for this clone.
      // The helper finds credentials the way this command did: from the profile it used, or (env
      // credentials) from the environment git hands down to it.
      const fromProfile = authSource.startsWith("profile ") ? ` --profile ${shellQuote(profile)}` : "";
      const helper = `!${shellQuote(process.execPath)} ${shellQuote(process.argv[1] ?? "iterate")} --base-url ${shellQuote(baseUrl)}${fromProfile} repo credential`;
      const args = ["clone", "-c", "credential.helper=", "-c", `credential.helper=${helper}`, url, ...(directory === undefined ? [] : [directory])];
      const code = await ctx.step(`cloning ${url}`, runGit(args, ctx));
      if (code !== 0) throw new ItxError("UNAVAILABLE", `git clone of ${url} failed (exit ${code}); git's own message is above`);
      ctx.print({ url, directory: directory ?? null }, `cloned ${url}`);
    });
  repo
    .command("credential")
    .description("git's credential helper protocol (git calls it; you need not): answers `get` for this OS's URL")
    .argument("<operation>", "get, store or erase")
    .action(async (operation: string) => {
      if (operation !== "get") return; // nothing is stored by git: the CLI's own credentials are the source
      const asked = parseCredentialRequest(await readAll(ctx.io.stdin));
      const { baseUrl, auth } = ctx.target;
      const os = new URL(baseUrl);
      // Credentials go only to the OS they belong to.
      if (auth === undefined || asked.protocol !== os.protocol.slice(0, -1) || asked.host !== os.host) return;
      if (auth.type === "admin-secret") ctx.io.stdout.write(`username=admin\npassword=${auth.secret}\n`);
      else if (auth.type === "bearer") ctx.io.stdout.write(`username=token\npassword=${auth.token}\n`);
    });
}

/** `slug:/repos/path` → its parts, or a usage error. */
export function parseRepoSpec(spec: string): { project: string; path: string } {
  const colon = spec.indexOf(":");
  const project = colon === -1 ? "" : spec.slice(0, colon);
  const path = colon === -1 ? "" : spec.slice(colon + 1);
  if (project === "" || !path.startsWith("/")) throw new UsageError(`name a repository as <project slug>:<repo path>, e.g. my-project:/repos/site (got ${JSON.stringify(spec)})`);
  return { project, path: path.replace(/\/+$/, "").replace(/\.git$/, "") };
}

/** The `key=value` lines git sends a credential helper. */
export function parseCredentialRequest(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const equals = line.indexOf("=");
    if (equals > 0) fields[line.slice(0, equals)] = line.slice(equals + 1).trim();
  }
  return fields;
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

function runGit(args: string[], ctx: CliContext): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn("git", args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...ctx.io.env } });
    // git says what it does on stderr; so does the CLI (stdout stays for answers and --json).
    child.stdout.on("data", (chunk: Buffer) => ctx.io.stderr.write(chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => ctx.io.stderr.write(chunk.toString()));
    child.once("error", (error) => fail(new ItxError("UNAVAILABLE", `git could not be started (is it installed?): ${error.message}`)));
    child.once("exit", (code) => done(code ?? 1));
  });
}

async function readAll(stream: Readable): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += chunk.toString();
  return text;
}
