import { parse } from "acorn";
import { simple } from "acorn-walk";
import { ItxError } from "iterate/errors";


type Node = { type: string; start: number; end: number; body?: Node };

/**
 * Rewrites a script expression so that every loop body first calls `guard()`. Answers the new
 * source, or INVALID_ARGUMENT naming the line of a syntax error. The guard's name is random, so
 * a script cannot declare a binding that shadows it.
 */
export function guardLoops(source: string, guard: string): string {
  let tree: unknown;
  try {
    tree = parse(`(${source}\n)`, { ecmaVersion: "latest", sourceType: "module", locations: true });
  } catch (error) {
    const { message, loc } = error as { message: string; loc?: { line: number; column: number } };
    const where = loc ? ` at line ${loc.line}, column ${loc.column + 1} of the script` : "";
    throw new ItxError("SCRIPT_FAILED", `SyntaxError: ${message.replace(/ \(\d+:\d+\)$/, "")}${where}`);
  }
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
  // Offsets are in the parenthesised text; apply from the end so earlier offsets stay valid.
  let wrapped = `(${source}\n)`;
  for (const { at, text } of inserts.toSorted((a, b) => b.at - a.at)) wrapped = wrapped.slice(0, at) + text + wrapped.slice(at);
  return wrapped.slice(1, -2);
}

/** A guard identifier no script can know in advance. */
export function guardName(): string {
  return `__iterateLoopGuard_${crypto.randomUUID().replaceAll("-", "")}`;
}
