import { ItxError } from "iterate/errors";

// Names read by the language and by tooling on any object (promise resolution, JSON, inspectors,
// test matchers): a miss on these is an ordinary `undefined`, never a caller's typo.
const PROBED = new Set(["then", "toJSON", "dup", "onRpcBroken", "inspect", "nodeType", "asymmetricMatch", "tagName"]);

/**
 * Makes a call of a member a class does not have fail with a coded error that names what was
 * called and what exists: `session.projectz.list()` is NOT_FOUND "session has no member
 * "projectz"; it has: projects, streams, ...", instead of Cap'n Web's uncoded TypeError. Like the
 * invoke fallback, it sits on the prototype chain, so instances stay genuine RpcTargets.
 */
export function installMissingMemberError(target: abstract new (...args: never[]) => object, kind: string): void {
  const prototype = target.prototype as object;
  const members = Object.getOwnPropertyNames(prototype)
    .filter((name) => name !== "constructor")
    .toSorted();
  // The proxy wraps an object whose prototype is the parent (not the parent itself), so the chain
  // keeps the parent: `instanceof RpcTarget` must still hold, or nothing passes by reference.
  const base = Object.create(Object.getPrototypeOf(prototype) as object) as object;
  const fallback = new Proxy(base, {
    get(object, property, receiver) {
      if (typeof property !== "string" || property in object || PROBED.has(property) || property.startsWith("@@") || property.startsWith("$$")) {
        return Reflect.get(object, property, receiver);
      }
      throw new ItxError("NOT_FOUND", `${kind} has no member ${JSON.stringify(property)}; it has: ${members.join(", ")}`, {
        details: { member: property, members },
      });
    },
  });
  Object.setPrototypeOf(prototype, fallback);
}
