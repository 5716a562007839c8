import type { Description } from "iterate/types";

/**
 * Builds a node's `__describe()` answer. Every node uses it so the envelope stays the same
 * everywhere: kind, instructions, children, and whatever the node adds beside them.
 */
export function describeNode<Extra extends object>(base: Description, extra: Extra): Description & Extra {
  return { ...base, ...extra };
}
