import { ItxError } from "iterate/errors";
import { RESERVED_PATH_SEGMENTS } from "./capability-path.ts";
import type { LiveShape } from "./itx-contract.ts";

// A live capability arrives as Workers RPC values: a function stub, a stub of an RpcTarget, or a
// plain object whose functions are stubs. Parameters are released when the receiving call
// returns, so whatever the host keeps it must dup first (recursing into plain objects).

/** Keeps what a provider passed: dup()s every stub inside it. */
export function retainLive(value: unknown): unknown {
  if (isStub(value)) return value.dup();
  if (Array.isArray(value)) return value.map(retainLive);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, retainLive(inner)]));
  return value;
}

/** Releases what `retainLive` kept. */
export function releaseLive(value: unknown): void {
  try {
    if (isStub(value)) (value as Partial<Disposable>)[Symbol.dispose]?.();
    else if (Array.isArray(value)) value.forEach(releaseLive);
    else if (isPlainObject(value)) Object.values(value).forEach(releaseLive);
  } catch {
    // the provider may already be gone
  }
}

/** Decides how a live capability is dispatched, from its structure alone. */
export function liveShapeOf(value: unknown): LiveShape {
  if (typeof value === "function") return "function";
  if (isPlainObject(value)) return typeof value.call === "function" ? "call" : "members";
  if (isStub(value)) return "members";
  throw new ItxError("INVALID_ARGUMENT", "a live capability is a function, an object of methods, or an object implementing call({ path, args })");
}

/**
 * Calls `remainder` with `args` on a kept live capability. Members are replayed onto the object
 * in the provider's process, calling the last segment on its parent so `this` stays right.
 */
export async function callLive(shape: LiveShape, value: unknown, remainder: string[], args: unknown[]): Promise<unknown> {
  for (const segment of remainder) {
    if (RESERVED_PATH_SEGMENTS.has(segment)) throw new ItxError("INVALID_ARGUMENT", `"${segment}" is reserved`);
  }
  if (shape === "call") return (value as { call(input: { path: string[]; args: unknown[] }): unknown }).call({ path: remainder, args });
  if (remainder.length === 0) {
    if (typeof value !== "function") throw new ItxError("NOT_FOUND", "this capability is an object: call one of its methods");
    return (value as (...args: unknown[]) => unknown)(...args);
  }
  let parent: unknown = value;
  for (const segment of remainder.slice(0, -1)) parent = member(parent, segment);
  const last = remainder.at(-1) as string;
  const method = member(parent, last);
  if (typeof method !== "function") throw new ItxError("NOT_FOUND", `no method ${remainder.join(".")} on this capability`);
  return (parent as Record<string, (...args: unknown[]) => unknown>)[last]?.(...args);
}

function member(value: unknown, segment: string): unknown {
  if (isPlainObject(value)) return Object.hasOwn(value, segment) ? value[segment] : undefined;
  if (isStub(value) || typeof value === "function") return (value as Record<string, unknown>)[segment];
  return undefined;
}

/** What calling a live capability whose provider's session ended answers. */
export function disconnectedError(mountPath: string[], scope: string): ItxError {
  return new ItxError(
    "CAPABILITY_DISCONNECTED",
    `${mountPath.join(".")} was provided live on ${scope} by a session that is no longer connected; its provider must provide it again`,
  );
}

/** True for errors that mean the provider's session is gone. */
export function isDisconnectError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /no longer running|RPC session (was|has been) (shut down|closed|canceled)|WebSocket (was )?closed|disconnected|connection (was )?lost|stub .*disposed|has been disposed/i.test(
    message,
  );
}

function isStub(value: unknown): value is { dup(): unknown } {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { dup?: unknown }).dup === "function";
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
