import { createRequire } from "node:module";
import { Command } from "commander";
import type { CliContext } from "./cli-context.ts";
import { registerAdminCommands } from "./commands/admin-commands.ts";
import { registerRepoCommands } from "./commands/repo-commands.ts";
import { registerAgentCommands } from "./commands/agent-commands.ts";
import { registerContextCommands } from "./commands/context-commands.ts";
import { registerSessionCommands } from "./commands/session-commands.ts";
import { registerStreamCommands } from "./commands/stream-commands.ts";
import { DEFAULT_BASE_URL, type GlobalOptions } from "./target.ts";

// src/cli and dist/cli both sit two folders below the package's package.json.
const VERSION = (createRequire(import.meta.url)("../../package.json") as { version: string }).version;

const FOOTER = `
The OS: --base-url, else ITERATE_BASE_URL, else the profile's, else ${DEFAULT_BASE_URL}.
Credentials: ITERATE_ADMIN_SECRET, else ITERATE_TOKEN, else the profile's (\`iterate login\`),
else, for an OS on this machine, the local default secret of \`pnpm dev\`.
Exit codes map from error codes: see docs/cli.md. Shell completion: \`iterate complete bash|zsh|fish\`.`;

/** The `iterate` command tree; `ctx` is what every command runs with. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command("iterate")
    .description("talk to an iterate OS from a shell")
    .version(VERSION, "-v, --version", "print the CLI's version")
    .option("--base-url <url>", "the OS to talk to")
    .option("--profile <name>", "which stored login to use (default: ITERATE_PROFILE, else \"default\")")
    .option("--json", "print answers as JSON (one document, or one event per line) for scripts")
    .showSuggestionAfterError(true)
    .addHelpText("after", FOOTER)
    .configureOutput({
      writeOut: (text) => ctx.io.stdout.write(text),
      writeErr: (text) => ctx.io.stderr.write(text),
    })
    .exitOverride();
  program.hook("preAction", (_program, action) => ctx.setOptions(action.optsWithGlobals<GlobalOptions>()));
  registerSessionCommands(program, ctx);
  registerContextCommands(program, ctx);
  registerStreamCommands(program, ctx);
  registerAgentCommands(program, ctx);
  registerAdminCommands(program, ctx);
  registerRepoCommands(program, ctx);
  program.command("complete").description("print a shell completion script: iterate complete bash|zsh|fish|powershell").argument("[shell]");
  // Every subcommand reports through the same streams and throws instead of exiting.
  const configure = (command: Command) => {
    command.exitOverride().configureOutput({ writeOut: (text) => ctx.io.stdout.write(text), writeErr: (text) => ctx.io.stderr.write(text) });
    command.commands.forEach(configure);
  };
  program.commands.forEach(configure);
  return program;
}

/**
 * The command tree with shell completion wired in. @bomb.sh/tab is loaded only for
 * `iterate complete`, so the other commands do not pay for it.
 */
export async function buildProgramWithCompletion(ctx: CliContext): Promise<Command> {
  const program = buildProgram(ctx);
  const complete = program.commands.find((command) => command.name() === "complete");
  if (complete) (program.commands as Command[]).splice(program.commands.indexOf(complete), 1);
  const { default: tab } = await import("@bomb.sh/tab/commander");
  tab(program);
  return program;
}
