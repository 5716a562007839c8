import { parse } from "acorn";
import { simple } from "acorn-walk";
import { ItxError } from "iterate/errors";


type Node = { type: string; start: number; end: number; body?: Node };

/**
 * Rewrites a script expression so that every loop body first calls `guard()`. Answers the new
 * source, or SCRIPT_FAILED naming the line of a syntax error, or saying the source is more than
 * one expression (`1); doSomething(); (2` would otherwise put a statement of its own at the top
 * of the module it runs in, run when the module loads). The guard's name is random, so a script
 * cannot declare a binding that shadows it.
 */
export function guardLoops(source: string, guard: string): string {
  const wrapped = `(${source}\n)`;
  let tree: { body: Array<{ type: string; expression?: Node }> };
  try {
    tree = parse(wrapped, { ecmaVersion: "latest", sourceType: "module", locations: true, preserveParens: true }) as unknown as typeof tree;
  } catch (error) {
    const { message, loc } = error as { message: string; loc?: { line: number; column: number } };
    const where = loc ? ` at line ${loc.line}, column ${loc.column + 1} of the script` : "";
    throw new ItxError("SCRIPT_FAILED", `SyntaxError: ${message.replace(/ \(\d+:\d+\)$/, "")}${where}`);
  }
  const [statement] = tree.body;
  const whole = tree.body.length === 1 && statement?.expression?.type === "ParenthesizedExpression" && statement.expression.end === wrapped.length;
  if (!whole) throw new ItxError("SCRIPT_FAILED", "a script is one expression: async (itx) => { ... }");
  const inserts: Array<{ at: number; text: string }> = [];
  const visit = (node: Node) => {
    const body = node.body;
    if (!body) return;
    if (body.type === "BlockStatement") {
      inserts.push({ at: body.start + 1, text: ` ${guard}();` });
    } else {
      inserts.push({ at: body.start, text: `{ ${guard}(); ` }, { at: body.end, text: " }" });
    }
  };
  simple(tree as never, {
    ForStatement: visit as never,
    ForInStatement: visit as never,
    ForOfStatement: visit as never,
    WhileStatement: visit as never,
    DoWhileStatement: visit as never,
  });
  // Offsets are in the parenthesised text.
  return spliced(wrapped, inserts).slice(1, -2);
}

/**
 * `text` with each insertion made at its offset, in one pass: a source of many loops is copied
 * once, not once per loop. Insertions at one offset land in the reverse of their order in
 * `inserts`: the walk visits inner loops first, so an outer loop's ` }` closes after theirs.
 */
function spliced(text: string, inserts: Array<{ at: number; text: string }>): string {
  const order = inserts.map((insert, index) => ({ ...insert, index })).toSorted((a, b) => a.at - b.at || b.index - a.index);
  const pieces: string[] = [];
  let from = 0;
  for (const { at, text: inserted } of order) {
    pieces.push(text.slice(from, at), inserted);
    from = at;
  }
  pieces.push(text.slice(from));
  return pieces.join("");
}

/** A guard identifier no script can know in advance. */
export function guardName(): string {
  return `__iterateLoopGuard_${crypto.randomUUID().replaceAll("-", "")}`;
}
