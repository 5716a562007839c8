import { readFileSync } from "node:fs";
import type { Command } from "commander";
import type { Description } from "../../types.ts";
import type { CliContext } from "../cli-context.ts";
import { readAll } from "../io.ts";
import { human, table } from "../render.ts";
import { UsageError } from "../target.ts";

const PROJECT_OPTION = ["-p, --project <slug[:/path]>", "the context: a project, optionally with a path (default: ITERATE_PROJECT)"] as const;

/** `describe [context]`, `run <file|->`, `call <path> [args]`. */
export function registerContextCommands(program: Command, ctx: CliContext): void {
  program
    .command("describe")
    .description("what a node is and what it offers (__describe): the session, or a context `slug[:/path]`")
    .argument("[context]", "a project slug, optionally with a context path: my-project:/agents/helper")
    .action(async (spec: string | undefined) => {
      const node = spec === undefined ? ctx.session() : ctx.context(spec);
      const description = (await ctx.step("describing", node.__describe())) as Description & Record<string, unknown>;
      ctx.print(description, describeText(description));
    });

  program
    .command("run")
    .description("run a script `async (itx) => { ... }` in an isolate scoped to a context and print what it returns")
    .argument("<file>", "the script's file, or - for stdin")
    .option(...PROJECT_OPTION)
    .option("--timeout <ms>", "the script's deadline in milliseconds", parseInteger)
    .action(async (file: string, options: { project?: string; timeout?: number }) => {
      const source = file === "-" ? await readAll(ctx.io.stdin) : readScript(file);
      const itx = ctx.context(options.project);
      const result = await ctx.step("running the script", itx.run(source, options.timeout === undefined ? {} : { timeoutMs: options.timeout }));
      ctx.print(result);
    });

  program
    .command("call")
    .description("call a capability by its dotted path, e.g. `iterate call -p demo slack.chat.postMessage '[\"hi\"]'`")
    .argument("<path>", "the capability's path, segments separated by dots")
    .argument("[args]", "a JSON array of arguments, or one JSON value as the only argument")
    .option(...PROJECT_OPTION)
    .action(async (path: string, args: string | undefined, options: { project?: string }) => {
      const segments = path.split(".");
      if (segments.some((segment) => segment === "")) throw new UsageError(`a capability path is dot-separated names, got ${JSON.stringify(path)}`);
      const parsed = args === undefined ? [] : parseJson(args, "args");
      const itx = ctx.context(options.project);
      const result = await ctx.step(`calling ${path}`, itx.invokeCapability({ path: segments, args: Array.isArray(parsed) ? parsed : [parsed] }));
      ctx.print(result);
    });
}

/** A description for people: kind, instructions, members, and a context's capabilities. */
export function describeText(description: Description & Record<string, unknown>): string {
  const lines = [`${description.kind}${typeof description.context === "string" ? ` ${description.context}` : ""}`, description.instructions, ""];
  const children = Object.entries(description.children ?? {});
  if (children.length > 0) lines.push(table(["MEMBER", "WHAT"], children));
  const capabilities = description.capabilities;
  if (Array.isArray(capabilities) && capabilities.length > 0) {
    const rows = capabilities.map((row: { path: string[]; kind: string; scope: string; connected: boolean; instructions?: string }) => [
      row.path.join("."),
      row.kind,
      row.scope,
      row.connected ? "" : "disconnected",
      (row.instructions ?? "").split("\n")[0] ?? "",
    ]);
    lines.push("", table(["CAPABILITY", "KIND", "SCOPE", "STATE", "INSTRUCTIONS"], rows));
  }
  const rest = Object.fromEntries(Object.entries(description).filter(([key]) => !["kind", "instructions", "children", "capabilities", "types", "context"].includes(key)));
  if (Object.keys(rest).length > 0) lines.push("", human(rest));
  return lines.join("\n").trimEnd();
}

function readScript(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
}

/** JSON from an argument; a usage error naming the argument when it is not JSON. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${what} must be JSON, got ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)}`);
  }
}

/** A non-negative integer option. */
export function parseInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new UsageError(`expected a whole number, got ${JSON.stringify(value)}`);
  return number;
}
