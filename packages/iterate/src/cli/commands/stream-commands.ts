import type { Command } from "commander";
import { readEvents } from "../../client/read-events.ts";
import type { EventInput, StreamEvent } from "../../types.ts";
import type { CliContext, Stub } from "../cli-context.ts";
import { readAll } from "../io.ts";
import { eventLine } from "../render.ts";
import { UsageError } from "../target.ts";
import { parseInteger, parseJson } from "./context-commands.ts";
import { untilStopped } from "./until-stopped.ts";

const PROJECT_OPTION = ["-p, --project <slug[:/path]>", "a project's stream (default: the deployment-wide streams, admin only)"] as const;

/** `streams read|tail|append <path>`. */
export function registerStreamCommands(program: Command, ctx: CliContext): void {
  const streams = program.command("streams").description("read, follow and append to event streams");
  const open = (path: string, project: string | undefined): Stub =>
    project === undefined && ctx.io.env.ITERATE_PROJECT === undefined ? ctx.session().streams.get(path) : ctx.context(project).streams.get(path);
  const printEvent = (event: StreamEvent) => ctx.io.stdout.write(`${ctx.json ? JSON.stringify(event) : eventLine(event)}\n`);

  streams
    .command("read")
    .description("print a stream's stored events (with --json, one event per line)")
    .argument("<path>", "the stream's path, e.g. /orders")
    .option(...PROJECT_OPTION)
    .option("--after <offset>", "start after this offset", parseInteger, 0)
    .option("--limit <count>", "at most this many events", parseInteger)
    .action(async (path: string, options: { project?: string; after: number; limit?: number }) => {
      const stream = open(path, options.project);
      let printed = 0;
      const reading = (async () => {
        for await (const page of readEvents(stream, { afterOffset: options.after })) {
          for (const event of page) {
            if (options.limit !== undefined && printed >= options.limit) return;
            printEvent(event);
            printed++;
          }
        }
      })();
      await ctx.step(`reading ${path}`, reading);
    });

  streams
    .command("tail")
    .description("follow a stream live, ephemeral events (~) included, until Ctrl-C")
    .argument("<path>", "the stream's path")
    .option(...PROJECT_OPTION)
    .option("--after <offset>", "replay stored events after this offset first (default: only new events)", parseInteger)
    .option("--count <n>", "stop after this many events", parseInteger)
    .action(async (path: string, options: { project?: string; after?: number; count?: number }) => {
      const stream = open(path, options.project);
      let seen = 0;
      let stop: (() => void) | undefined;
      const afterOffset = options.after ?? ((await ctx.step(`opening ${path}`, stream.head())) as number);
      const { key } = (await ctx.step(
        `subscribing to ${path}`,
        stream.subscribe(
          (events: StreamEvent[]) => {
            for (const event of events) {
              if (options.count !== undefined && seen >= options.count) break;
              printEvent(event);
              seen++;
            }
            if (options.count !== undefined && seen >= options.count) stop?.();
          },
          { afterOffset },
        ),
      )) as { key: string };
      ctx.io.stderr.write(`following ${path} from offset ${afterOffset} (Ctrl-C to stop)\n`);
      await untilStopped((done) => (stop = done));
      await stream.unsubscribe(key).catch(() => undefined);
    });

  streams
    .command("append")
    .description("append events as one commit: an event or array as JSON (argument or stdin, also one event per line), or --type")
    .argument("<path>", "the stream's path")
    .argument("[events]", "JSON: { type, payload?, idempotencyKey?, ephemeral? } or an array of them (default: stdin)")
    .option(...PROJECT_OPTION)
    .option("--type <type>", "append one event of this type")
    .option("--payload <json>", "its payload (with --type)")
    .option("--ephemeral", "never stored: only live subscribers see it (with --type)")
    .action(async (path: string, text: string | undefined, options: { project?: string; type?: string; payload?: string; ephemeral?: boolean }) => {
      let events: EventInput[];
      if (options.type !== undefined) {
        if (text !== undefined) throw new UsageError("give either --type or the events as JSON, not both");
        events = [{ type: options.type, ...(options.payload === undefined ? {} : { payload: parseJson(options.payload, "--payload") }), ...(options.ephemeral ? { ephemeral: true } : {}) }];
      } else {
        events = parseEvents(text ?? (await readAll(ctx.io.stdin)));
      }
      const stored = (await ctx.step(`appending to ${path}`, open(path, options.project).append(...events))) as StreamEvent[];
      if (ctx.json) ctx.print(stored);
      else ctx.print(stored, stored.map(eventLine).join("\n"));
    });
}

/** Events from JSON text: one event, an array, or one event per line. */
export function parseEvents(text: string): EventInput[] {
  const trimmed = text.trim();
  if (trimmed === "") throw new UsageError("no events: pass them as JSON, on stdin, or use --type");
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    value = trimmed.split(/\r?\n/).filter((line) => line.trim() !== "").map((line, index) => parseJson(line, `line ${index + 1}`));
  }
  const events = Array.isArray(value) ? value : [value];
  for (const [index, event] of events.entries()) {
    if (typeof event !== "object" || event === null || typeof (event as { type?: unknown }).type !== "string") {
      throw new UsageError(`event ${index + 1} needs a string "type", got ${JSON.stringify(event)}`);
    }
  }
  return events as EventInput[];
}
