import { parseExpressionAt } from "acorn";

/** What a model reply holds: the one script to run, or why it cannot run. */
export type ReplyScript = { ok: true; script: string } | { ok: false; problem: string };

// A fenced block: ``` or ~~~ with an optional info string, up to the matching closing fence.
const FENCE = /^(```|~~~)[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n([\s\S]*?)^\1[ \t]*$/gm;
const SCRIPT_LANGUAGES = new Set(["", "ts", "typescript", "js", "javascript", "tsx", "mts"]);

/**
 * Finds the script in a model reply. The contract: exactly one fenced TypeScript block, holding
 * exactly one `async (itx) => { ... }`. Anything else is a problem the model is told about.
 *
 * @example
 * scriptInReply("Sure.\n```ts\nasync (itx) => 1\n```"); // { ok: true, script: "async (itx) => 1" }
 */
export function scriptInReply(reply: string): ReplyScript {
  const blocks = [...reply.matchAll(FENCE)].filter((match) => SCRIPT_LANGUAGES.has((match[2] ?? "").toLowerCase()));
  if (blocks.length === 0) return { ok: false, problem: "your reply had no fenced ```ts block" };
  if (blocks.length > 1) return { ok: false, problem: `your reply had ${blocks.length} fenced code blocks; exactly one is run, so send exactly one` };
  const script = (blocks[0]?.[3] ?? "").trim();
  const problem = notOneAsyncFunction(script);
  return problem ? { ok: false, problem } : { ok: true, script };
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
