import { STREAM_LIMITS } from "./limits.ts";

/**
 * What JSON text shows about the values it parses to, read from the text alone: how deep it
 * nests, and whether every value in it is one a payload may hold. Checks that would otherwise walk
 * every parsed value (or serialize it again to measure it) can be skipped when the text proves
 * them.
 * @module
 */

/**
 * The deepest nesting of objects and arrays in JSON text, found by scanning (strings skipped)
 * without parsing: a body can be refused for depth before the parser, or anything walking the
 * result, recurses into it. Stops scanning as soon as `max` is passed and answers `max + 1`.
 *
 * @example
 * jsonDepth('{"a":[1,{"b":2}]}'); // 3
 */
export function jsonDepth(text: string, max: number = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 0x5c) index++; // a backslash escapes the next character
      else if (char === 0x22) inString = false;
      continue;
    }
    if (char === 0x22) inString = true;
    else if (char === 0x7b || char === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > max) return deepest;
      }
    } else if (char === 0x7d || char === 0x5d) depth--;
  }
  return deepest;
}

/**
 * A value parsed from JSON text and serialized again is at most this many times the text: only
 * numbers grow ("1e20" is written as 21 characters, 5.25 times its 4); strings, keys and structure
 * keep their length or lose characters (escapes, whitespace).
 */
export const SERIALIZED_GROWTH_MAX = 6;

// An escaped surrogate (\uD800-\uDFFF): the only way JSON text well-formed as UTF-16 parses to a lone one.
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;
// Numbers that could parse to ±Infinity: a number is below 10^(its integer digits + its exponent),
// and only past 10^308 is it infinite, so no run of 100 digits and no exponent of 100 or more prove
// every number finite.
const MAYBE_INFINITE = /\d{100}|[eE]\+?0*[1-9]\d{2}/;

/**
 * Whether every string, key and number that `JSON.parse(text)` makes passes the payload checks
 * (`copyJsonValue`): the text is well-formed UTF-16 and escapes no surrogate, so no string or key
 * holds a lone one, and no number can be infinite. Nesting and sizes are the caller's to bound
 * (`jsonDepth`, `SERIALIZED_GROWTH_MAX`), as only it knows what the text holds. A false answer
 * means "not shown", never "invalid".
 */
export function holdsOnlyPayloadValues(text: string): boolean {
  return text.isWellFormed() && !ESCAPED_SURROGATE.test(text) && !MAYBE_INFINITE.test(text);
}

/** What the text of an append holds around its payloads, for `provesAppend`. */
export interface AppendTextShape {
  /** `jsonDepth` of the text. */
  depth: number;
  /** Levels of nesting around each payload (the body's array, the input object). */
  around: number;
  /** Events the append makes. */
  count: number;
  /** Characters each event may gain beyond its share of the text (an envelope, an omitted payload). */
  addedPerEvent: number;
}

/**
 * Whether text parsed into an append shows, without visiting a value, that every payload passes
 * the payload checks and every event and the append fit EVENT_MAX_BYTES and APPEND_MAX_BYTES:
 * payload values `holdsOnlyPayloadValues`, nesting at most PAYLOAD_MAX_DEPTH inside what is
 * `around` them, and sizes within the limits even if every value grew SERIALIZED_GROWTH_MAX times,
 * every event gained `addedPerEvent` characters and every character took 3 bytes of UTF-8.
 * False means "not shown": the full checks decide.
 */
export function provesAppend(text: string, { depth, around, count, addedPerEvent }: AppendTextShape): boolean {
  const grown = SERIALIZED_GROWTH_MAX * text.length;
  return (
    depth <= STREAM_LIMITS.PAYLOAD_MAX_DEPTH + around &&
    3 * (grown + addedPerEvent) <= STREAM_LIMITS.EVENT_MAX_BYTES &&
    3 * (grown + count * addedPerEvent) <= STREAM_LIMITS.APPEND_MAX_BYTES &&
    holdsOnlyPayloadValues(text)
  );
}
