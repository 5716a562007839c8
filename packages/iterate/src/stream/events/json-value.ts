import { isPlainObject } from "./json.ts";
import { invalidInput } from "./invalid-argument.ts";
import { STREAM_LIMITS } from "./limits.ts";

/**
 * Checks that `value` is plain JSON (plain objects, dense arrays, well-formed strings, finite
 * numbers, booleans, null) nested at most PAYLOAD_MAX_DEPTH levels, and returns a copy of it. A
 * string or key with a lone surrogate is refused: stored as UTF-8 it would come back as U+FFFD
 * from one reader and unchanged from another, so the stream would answer two different events. The copy is
 * what gets stored, so a caller mutating its object afterwards changes nothing. Keys whose value
 * is `undefined` are dropped, as JSON drops them. Throws INVALID_ARGUMENT naming the field.
 *
 * @example
 * copyJsonValue({ at: new Date() }, "payload"); // throws: payload.at is a Date
 */
export function copyJsonValue(value: unknown, field: string): unknown {
  return copy(value, field, 0);
}

function copy(value: unknown, field: string, depth: number): unknown {
  switch (typeof value) {
    case "string":
      assertWellFormed(value, field);
      return value;
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw invalidInput(`${field} is ${value}; numbers must be finite`, { field });
      return value;
    case "object":
      if (value === null) return null;
      break;
    default:
      throw invalidInput(`${field} is ${describe(value)}, which JSON cannot hold`, { field });
  }
  // A cycle also ends here: it nests without end.
  if (depth >= STREAM_LIMITS.PAYLOAD_MAX_DEPTH) {
    throw invalidInput(`${field} is nested deeper than ${STREAM_LIMITS.PAYLOAD_MAX_DEPTH} levels`, {
      field,
      limit: "PAYLOAD_MAX_DEPTH",
    });
  }
  if (Array.isArray(value)) return copyArray(value, field, depth);
  if (!isPlainObject(value)) {
    throw invalidInput(
      `${field} is ${describe(value)}; only plain objects, arrays, strings, finite numbers, booleans and null are allowed`,
      { field },
    );
  }
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item === undefined) continue;
    assertWellFormed(key, `${field} key`);
    // defineProperty, so that a "__proto__" key stays an ordinary key.
    Object.defineProperty(result, key, {
      value: copy(item, `${field}.${key}`, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

function copyArray(value: readonly unknown[], field: string, depth: number): unknown[] {
  const result: unknown[] = [];
  for (let i = 0; i < value.length; i++) {
    if (!(i in value)) throw invalidInput(`${field}[${i}] is a hole in a sparse array`, { field: `${field}[${i}]` });
    result.push(copy(value[i], `${field}[${i}]`, depth + 1));
  }
  return result;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Throws INVALID_ARGUMENT when `text` holds a lone surrogate (it is not well-formed Unicode). */
export function assertWellFormed(text: string, field: string): void {
  const match = LONE_SURROGATE.exec(text);
  if (match) {
    throw invalidInput(`${field} holds a lone surrogate (\\u${match[0].charCodeAt(0).toString(16)}) at index ${match.index}: strings must be well-formed Unicode`, {
      field,
    });
  }
}

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value !== "object" || value === null) return `a ${typeof value}`;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === "string" && name !== "" ? `a ${name}` : "an object with a custom prototype";
}
