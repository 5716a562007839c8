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
  return copy(value, new FieldPath(field), 0, true);
}

/**
 * The same checks as `copyJsonValue` without the copy: for a value nobody else holds (one the
 * caller parsed itself, or received as a serialized RPC argument), where a copy would only cost.
 * Answers `value` itself.
 */
export function checkJsonValue(value: unknown, field: string): unknown {
  return copy(value, new FieldPath(field), 0, false);
}

/**
 * Where the copy is, kept as a stack of keys and indexes and written out only for an error: a
 * payload of many fields would otherwise build one path string per value it holds.
 */
class FieldPath {
  readonly #root: string;
  readonly #steps: Array<string | number> = [];

  constructor(root: string) {
    this.#root = root;
  }

  push(step: string | number): void {
    this.#steps.push(step);
  }

  pop(): void {
    this.#steps.pop();
  }

  toString(): string {
    let text = this.#root;
    for (const step of this.#steps) text += typeof step === "number" ? `[${step}]` : `.${step}`;
    return text;
  }
}

function copy(value: unknown, path: FieldPath, depth: number, clone: boolean): unknown {
  switch (typeof value) {
    case "string":
      if (!value.isWellFormed()) assertWellFormed(value, String(path));
      return value;
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw invalidInput(`${String(path)} is ${value}; numbers must be finite`, { field: String(path) });
      return value;
    case "object":
      if (value === null) return null;
      break;
    default:
      throw invalidInput(`${String(path)} is ${describe(value)}, which JSON cannot hold`, { field: String(path) });
  }
  // A cycle also ends here: it nests without end.
  if (depth >= STREAM_LIMITS.PAYLOAD_MAX_DEPTH) {
    throw invalidInput(`${String(path)} is nested deeper than ${STREAM_LIMITS.PAYLOAD_MAX_DEPTH} levels`, {
      field: String(path),
      limit: "PAYLOAD_MAX_DEPTH",
    });
  }
  if (Array.isArray(value)) return copyArray(value, path, depth, clone);
  if (!isPlainObject(value)) {
    throw invalidInput(
      `${String(path)} is ${describe(value)}; only plain objects, arrays, strings, finite numbers, booleans and null are allowed`,
      { field: String(path) },
    );
  }
  const result: Record<string, unknown> = clone ? {} : value;
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item === undefined) {
      // JSON has no such key: the copy leaves it out, and an unshared value loses it.
      if (!clone) delete value[key];
      continue;
    }
    if (!key.isWellFormed()) assertWellFormed(key, `${String(path)} key`);
    path.push(key);
    const copied = copy(item, path, depth + 1, clone);
    path.pop();
    if (!clone) continue;
    // An assignment to "__proto__" would set the prototype: that key alone is defined instead.
    if (key === "__proto__") Object.defineProperty(result, key, { value: copied, enumerable: true, writable: true, configurable: true });
    else result[key] = copied;
  }
  return result;
}

function copyArray(value: unknown[], path: FieldPath, depth: number, clone: boolean): unknown[] {
  const result: unknown[] = clone ? [] : value;
  for (let i = 0; i < value.length; i++) {
    if (!(i in value)) throw invalidInput(`${String(path)}[${i}] is a hole in a sparse array`, { field: `${String(path)}[${i}]` });
    path.push(i);
    const copied = copy(value[i], path, depth + 1, clone);
    path.pop();
    if (clone) result.push(copied);
  }
  return result;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Throws INVALID_ARGUMENT when `text` holds a lone surrogate (it is not well-formed Unicode). */
export function assertWellFormed(text: string, field: string): void {
  if (text.isWellFormed()) return;
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
