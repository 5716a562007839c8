import { ItxError } from "iterate/errors";
import { limitDetails, type LimitName } from "../limits.ts";

/**
 * A plain copy of `value` as a tree: shared references (a dereferenced `$ref`, a YAML alias) are
 * copied out, cycles become `{ $ref: "#circular" }`, and the copy stops with LIMIT_EXCEEDED once
 * it would hold more than `maxNodes` nodes. A small document whose references stand for an
 * exponential tree is refused here, before anything serializes it.
 */
export function boundedTree(value: unknown, maxNodes: number, limit: LimitName): unknown {
  let nodes = 0;
  const path = new Set<object>();
  const copy = (node: unknown): unknown => {
    if (++nodes > maxNodes) {
      throw new ItxError("LIMIT_EXCEEDED", `a remote document expands to more than ${maxNodes} nodes`, { details: limitDetails(limit) });
    }
    if (node === null || typeof node !== "object") {
      return typeof node === "function" || typeof node === "symbol" || typeof node === "bigint" ? undefined : node;
    }
    if (path.has(node)) return { $ref: "#circular" };
    path.add(node);
    try {
      if (Array.isArray(node)) return node.map(copy);
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) {
        // Keys are copied as data: a "__proto__" key must stay a key, not become the prototype.
        Object.defineProperty(out, key, { value: copy(child), enumerable: true, writable: true, configurable: true });
      }
      return out;
    } finally {
      path.delete(node);
    }
  };
  return copy(value);
}
