import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";

/**
 * Names that never traverse a dynamic path: prototype-pollution vectors and the controls of RPC
 * stubs and promises. Refused when a capability is provided and again when a call is dispatched,
 * since paths can be built by hand.
 */
export const RESERVED_PATH_SEGMENTS: ReadonlySet<string> = new Set([
  "__proto__",
  "constructor",
  "prototype",
  "then",
  "catch",
  "finally",
  "dup",
  "toJSON",
  "toString",
  "valueOf",
  "hasOwnProperty",
  "isPrototypeOf",
  "propertyIsEnumerable",
  "toLocaleString",
  "__defineGetter__",
  "__defineSetter__",
  "__lookupGetter__",
  "__lookupSetter__",
  "onRpcBroken",
  "__describe",
]);



const SEGMENT = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** Validates a path used to call a capability; the same rules as a provided path, minus the built-in check. */
export function parseCallPath(path: unknown): string[] {
  if (!Array.isArray(path)) throw new ItxError("INVALID_ARGUMENT", "a capability path is an array of strings");
  if (path.length > LIMITS.CAPABILITY_PATH_MAX_SEGMENTS) {
    throw new ItxError("INVALID_ARGUMENT", `a capability path has at most ${LIMITS.CAPABILITY_PATH_MAX_SEGMENTS} segments`, {
      details: limitDetails("CAPABILITY_PATH_MAX_SEGMENTS"),
    });
  }
  return path.map((segment, index) => parseSegment(segment, index));
}

/**
 * Validates the path a capability is provided at: non-empty, no reserved root, and no root in
 * `builtIns` (the built-ins of every itx, from itx/built-ins.ts: a mount can never shadow them,
 * since they resolve on the handle without reaching the capability host).
 */
export function parseProvidedPath(input: { name?: unknown; path?: unknown }, builtIns: ReadonlySet<string>): string[] {
  if (input.name !== undefined && input.path !== undefined) {
    throw new ItxError("INVALID_ARGUMENT", "give either name or path, not both");
  }
  const path = input.name !== undefined ? [input.name] : input.path;
  if (path === undefined) throw new ItxError("INVALID_ARGUMENT", "a capability needs a name or a path");
  const segments = parseCallPath(path);
  if (segments.length === 0) throw new ItxError("INVALID_ARGUMENT", "a capability path must not be empty");
  const root = segments[0] as string;
  if (builtIns.has(root)) {
    throw new ItxError("INVALID_ARGUMENT", `"${root}" is a built-in of every itx and cannot be provided or shadowed`);
  }
  return segments;
}

function parseSegment(segment: unknown, index: number): string {
  if (typeof segment !== "string") {
    throw new ItxError("INVALID_ARGUMENT", `capability path segment ${index} must be a string, got ${segment === null ? "null" : typeof segment}`);
  }
  if (RESERVED_PATH_SEGMENTS.has(segment)) {
    throw new ItxError("INVALID_ARGUMENT", `"${segment}" is reserved and can never be part of a capability path`);
  }
  if (segment.length === 0 || segment.length > LIMITS.CAPABILITY_SEGMENT_MAX_LENGTH || !SEGMENT.test(segment)) {
    throw new ItxError(
      "INVALID_ARGUMENT",
      `capability path segment ${JSON.stringify(segment.slice(0, 64))} must be 1-${LIMITS.CAPABILITY_SEGMENT_MAX_LENGTH} characters of letters, digits, _ $ - and not start with a digit`,
    );
  }
  return segment;
}

/** The table key of a path. */
export function pathKey(path: readonly string[]): string {
  return path.join(".");
}
