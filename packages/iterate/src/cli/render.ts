import type { StreamEvent } from "../types.ts";

/**
 * A value for people: strings as they are, everything else as indented JSON. `--json` output
 * never comes through here: it is always JSON.stringify of the answer, one document per line.
 */
export function human(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** Every control character but a line break and a tab. */
const CONTROL = /(?![\n\t])\p{Cc}/gu;

/**
 * Text from the OS made safe to write to a terminal: control characters other than line breaks
 * and tabs become U+FFFD. What the CLI prints for people comes from others (a model's reply, a
 * capability's instructions, a script's result), and escape sequences in it could rewrite the
 * screen, set the clipboard (OSC 52) or spoof a link (OSC 8).
 */
export function forTerminal(text: string): string {
  return text.replace(CONTROL, "\uFFFD");
}

/** One event on one line: `#offset type payload`; ephemeral events (never stored) with `~`. */
export function eventLine(event: StreamEvent): string {
  const mark = event.ephemeral ? `~${event.offset}` : `#${event.offset}`;
  const origin = event.source?.origin ? ` (${event.source.origin})` : "";
  const payload = event.payload === undefined ? "" : ` ${JSON.stringify(event.payload)}`;
  return `${mark} ${event.type}${origin}${payload}`;
}

/** Rows as aligned columns, with a header. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}
