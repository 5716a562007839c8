// Node-only: the `iterate` CLI's entry. bin/iterate.mjs checks the Node version, then calls main().
import { CommanderError } from "commander";
import { CliContext } from "./cli-context.ts";
import { EXIT_OK, EXIT_USAGE } from "./exit-codes.ts";
import { describeFailure } from "./failure.ts";
import { processIo, type CliIo } from "./io.ts";
import { buildProgram, buildProgramWithCompletion } from "./program.ts";

/** Runs the CLI with `argv` (without node and the script); answers the exit code. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const ctx = new CliContext(io);
  try {
    const program = wantsCompletion(argv) ? await buildProgramWithCompletion(ctx) : buildProgram(ctx);
    if (argv.length === 0) {
      program.outputHelp();
      return EXIT_USAGE;
    }
    await program.parseAsync(argv, { from: "user" });
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version end with exit code 0; parse errors were already printed by commander.
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    const failure = describeFailure(error, ctx.resolvedTarget);
    if (ctx.json) io.stdout.write(`${JSON.stringify({ error: { code: failure.code ?? null, message: failure.line } })}\n`);
    io.stderr.write(`${failure.line}\n`);
    return failure.exitCode;
  } finally {
    ctx.close();
  }
}

function wantsCompletion(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("complete");
}
