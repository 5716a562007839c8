import { ItxError } from "iterate/errors";
import { limitDetails, type LimitName } from "../limits.ts";

/**
 * How many nodes `document` would have with every local `$ref` replaced by its target, computed
 * without expanding anything (each target is sized once, cycles count as one node). The ref
 * parser walks the expanded tree, which a small document can make exponential: this is asked
 * first, and past `max` the document is refused (LIMIT_EXCEEDED) before the parser sees it.
 */
export function assertExpandedSize(document: unknown, max: number, limit: LimitName): number {
  const sizes = new Map<object, number>();
  const open = new Set<object>();
  const refuse = () => new ItxError("LIMIT_EXCEEDED", `the document expands to more than ${max} nodes once its references are resolved`, { details: limitDetails(limit) });
  const size = (node: unknown): number => {
    if (node === null || typeof node !== "object") return 1;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (open.has(node)) return 1; // a cycle: the parser leaves it as a reference
    open.add(node);
    let total = 1;
    for (const child of Object.values(node)) {
      const ref = typeof child === "object" && child !== null ? (child as { $ref?: unknown }).$ref : undefined;
      total += typeof ref === "string" ? size(resolvePointer(document, ref)) + Object.keys(child as object).length - 1 : size(child);
      if (total > max) throw refuse();
    }
    open.delete(node);
    sizes.set(node, total);
    return total;
  };
  const ref = typeof document === "object" && document !== null ? (document as { $ref?: unknown }).$ref : undefined;
  const total = typeof ref === "string" ? size(resolvePointer(document, ref)) : size(document);
  if (total > max) throw refuse();
  return total;
}

// A local JSON pointer's target; anything else (external, missing) counts as one node.
function resolvePointer(document: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let node = document;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const key = decodePointerSegment(raw, ref).replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

// A pointer in a URI fragment is percent-encoded; a malformed escape ("#/%") is the document's error.
function decodePointerSegment(raw: string, ref: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ItxError("INVALID_ARGUMENT", `the $ref ${JSON.stringify(ref.slice(0, 200))} is not a valid JSON pointer: it has a malformed percent-escape`);
  }
}
