/**
 * JSON helpers shared by every stream: a canonical form for comparing bodies, a byte count, and
 * the partial match `waitForEvent` uses.
 * @module
 */

/** True for `{}`-style objects: the only objects JSON can hold. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * JSON with object keys sorted at every level, so equal values always give equal text. Keys whose
 * value is `undefined` are left out, as `JSON.stringify` does; a bare `undefined` is written `null`.
 *
 * @example
 * stableJson({ b: 1, a: { d: undefined, c: [2] } }); // '{"a":{"c":[2]},"b":1}'
 */
export function stableJson(value: unknown): string {
  const text = JSON.stringify(value, (_key, item: unknown) => (isPlainObject(item) ? sortedCopy(item) : item));
  return text ?? "null";
}

function sortedCopy(object: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(object).toSorted();
  return Object.fromEntries(keys.map((key) => [key, object[key]]));
}

/** The parts of an event an idempotent append compares. */
export interface EventBody {
  type: string;
  payload?: unknown;
  ephemeral?: boolean;
}

/**
 * True when two events say the same thing: same type, same payload as canonical JSON, and both or
 * neither ephemeral. An omitted payload counts as `{}`, which is how the stream stores it.
 *
 * @example
 * sameEventBody({ type: "demo/ping", payload: { a: 1, b: undefined } }, { type: "demo/ping", payload: { a: 1 } }); // true
 */
export function sameEventBody(a: EventBody, b: EventBody): boolean {
  return (
    a.type === b.type &&
    (a.ephemeral === true) === (b.ephemeral === true) &&
    stableJson(a.payload ?? {}) === stableJson(b.payload ?? {})
  );
}

/**
 * Deep-partial equality: every key of `partial` must match the payload at that key. Nested plain
 * objects match partially too; arrays and scalars must be equal as JSON. A key whose expected
 * value is `undefined` asks for nothing, since JSON has no such key.
 *
 * @example
 * matchesPayload({ requestOffset: 4, status: "succeeded", extra: true }, { requestOffset: 4 }); // true
 * matchesPayload({ tags: ["a", "b"] }, { tags: ["a"] }); // false: arrays match whole
 */
export function matchesPayload(payload: unknown, partial: Record<string, unknown>): boolean {
  return matchesValue(payload, partial);
}

function matchesValue(actual: unknown, expected: unknown): boolean {
  if (!isPlainObject(expected)) return sameJson(actual, expected);
  if (!isPlainObject(actual)) return false;
  return Object.entries(expected).every(
    ([key, value]) => value === undefined || (Object.hasOwn(actual, key) && matchesValue(actual[key], value)),
  );
}

/**
 * Whether two JSON values are equal as JSON (object keys in any order; a key whose value is
 * undefined counts as absent), compared in place: the work is bounded by the smaller side, never
 * a serialization of a large payload for every waiter it is offered to.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => sameJson(item, b[index]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = keysOf(b);
    if (!hasDefinedKeys(a, keys.length)) return false;
    return keys.every((key) => Object.hasOwn(a, key) && sameJson(a[key], b[key]));
  }
  return false;
}

/** Whether `object` has exactly `count` keys JSON would write, counted no further than one past it. */
function hasDefinedKeys(object: Record<string, unknown>, count: number): boolean {
  let seen = 0;
  for (const key in object) {
    if (!Object.hasOwn(object, key) || object[key] === undefined) continue;
    seen += 1;
    if (seen > count) return false;
  }
  return seen === count;
}

/** The keys JSON would write: those whose value is not undefined. */
function keysOf(object: Record<string, unknown>): string[] {
  return Object.keys(object).filter((key) => object[key] !== undefined);
}

/**
 * True when `text` takes at most `maxBytes` bytes as UTF-8. UTF-8 spends 1 to 3 bytes per UTF-16
 * unit (a surrogate pair's 4 bytes are 2 per unit), so a text short enough at 3 bytes per unit,
 * or too long at 1, is decided without counting; only the band between is counted.
 */
export function utf8FitsIn(text: string, maxBytes: number): boolean {
  if (text.length * 3 <= maxBytes) return true;
  if (text.length > maxBytes) return false;
  return utf8ByteLength(text) <= maxBytes;
}

/**
 * The number of bytes `text` takes as UTF-8, counted without encoding it. A lone surrogate
 * counts 3, the size of the replacement character an encoder writes for it.
 */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
