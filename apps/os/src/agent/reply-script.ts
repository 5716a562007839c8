import { parseExpressionAt } from "acorn";

/** What a model reply holds: the one script to run, or why it cannot run. */
export type ReplyScript = { ok: true; script: string } | { ok: false; problem: string };

const SCRIPT_LANGUAGES = new Set(["", "ts", "typescript", "js", "javascript", "tsx", "mts"]);
const INFO_CHAR = /^[A-Za-z0-9_+-]$/;

/**
 * Finds the script in a model reply. The contract: exactly one fenced TypeScript block, holding
 * exactly one `async (itx) => { ... }`. Anything else is a problem the model is told about.
 *
 * @example
 * scriptInReply("Sure.\n```ts\nasync (itx) => 1\n```"); // { ok: true, script: "async (itx) => 1" }
 */
export function scriptInReply(reply: string): ReplyScript {
  const blocks = fencedBlocks(reply).filter((block) => SCRIPT_LANGUAGES.has(block.info.toLowerCase()));
  if (blocks.length === 0) return { ok: false, problem: "your reply had no fenced ```ts block" };
  if (blocks.length > 1) return { ok: false, problem: `your reply had ${blocks.length} fenced code blocks; exactly one is run, so send exactly one` };
  const script = (blocks[0]?.body ?? "").trim();
  const problem = notOneAsyncFunction(script);
  return problem ? { ok: false, problem } : { ok: true, script };
}

type Fence = "```" | "~~~";
interface FencedBlock {
  info: string;
  body: string;
}

/**
 * The fenced blocks of a reply: a line that opens with ``` or ~~~ (then blanks, an info word, and
 * anything to the end of its line), up to the first later line that is the same fence alone (blanks
 * after it allowed). An opening line with no closing line is ordinary text, and so is what follows it.
 * It finds what /^(```|~~~)[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n([\s\S]*?)^\1[ \t]*$/gm finds, but in
 * one pass: that expression backtracks on hostile replies (250 lines of "```", 250 spaces and "x"
 * took it over ten seconds), and it runs on every model reply on the agent's thread.
 */
function fencedBlocks(text: string): FencedBlock[] {
  const starts = lineStarts(text);
  // Every closing line, by fence, in order: an opening takes the first one after its own line.
  const closings: Record<Fence, Array<{ start: number; end: number }>> = { "```": [], "~~~": [] };
  for (const start of starts) {
    const fence = fenceAt(text, start);
    if (!fence) continue;
    const end = closingLineEnd(text, start + fence.length);
    if (end !== undefined) closings[fence].push({ start, end });
  }
  const nextClosing: Record<Fence, number> = { "```": 0, "~~~": 0 };
  const blocks: FencedBlock[] = [];
  let resumeAt = 0;
  // The first "\n" at or after the current opening's fence: both only move forward.
  let newline = 0;
  for (const start of starts) {
    const fence = start >= resumeAt ? fenceAt(text, start) : undefined;
    if (!fence) continue;
    if (newline < start + fence.length) newline = text.indexOf("\n", start + fence.length);
    if (newline < 0) break;
    const bodyStart = newline + 1;
    const candidates = closings[fence];
    while ((candidates[nextClosing[fence]]?.start ?? Infinity) < bodyStart) nextClosing[fence] += 1;
    const closing = candidates[nextClosing[fence]];
    if (!closing) continue;
    blocks.push({ info: infoWord(text, start + fence.length), body: text.slice(bodyStart, closing.start) });
    resumeAt = closing.end;
  }
  return blocks;
}

// Where lines start, as a multiline ^ sees them: after \n, \r, U+2028 or U+2029.
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let index = 0; index < text.length; index += 1) {
    if (isLineTerminator(text.charCodeAt(index))) starts.push(index + 1);
  }
  return starts;
}

function isLineTerminator(code: number): boolean {
  return code === 0x0a || code === 0x0d || code === 0x2028 || code === 0x2029;
}

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

function fenceAt(text: string, start: number): Fence | undefined {
  if (text.startsWith("```", start)) return "```";
  if (text.startsWith("~~~", start)) return "~~~";
  return undefined;
}

// The end of a closing line whose fence ends at `from` (only blanks may follow it), or undefined.
function closingLineEnd(text: string, from: number): number | undefined {
  let end = from;
  while (end < text.length && isBlank(text.charCodeAt(end))) end += 1;
  return end === text.length || isLineTerminator(text.charCodeAt(end)) ? end : undefined;
}

// The info word after an opening fence: blanks skipped, then letters, digits, _, + and -.
function infoWord(text: string, from: number): string {
  let start = from;
  while (start < text.length && isBlank(text.charCodeAt(start))) start += 1;
  let end = start;
  while (end < text.length && INFO_CHAR.test(text.charAt(end))) end += 1;
  return text.slice(start, end);
}

// The block must parse as one expression that is an async function of one parameter.
function notOneAsyncFunction(script: string): string | undefined {
  if (script.length === 0) return "your ```ts block was empty";
  let node;
  try {
    node = parseExpressionAt(script, 0, { ecmaVersion: "latest" });
  } catch (error) {
    return `your script did not parse as JavaScript (${(error as Error).message}); write it without type annotations`;
  }
  if (script.slice(node.end).trim().replace(/;$/, "").length > 0) return "your block held more than one expression; it must be exactly one async (itx) => { ... }";
  const isAsyncFunction = (node.type === "ArrowFunctionExpression" || node.type === "FunctionExpression") && node.async;
  if (!isAsyncFunction) return "your block must be one async function: async (itx) => { ... }";
  return undefined;
}
