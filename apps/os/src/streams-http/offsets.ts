/**
 * Durable Streams offsets. The protocol wants opaque strings that sort in stream order; ours are
 * the journal offset as 16 decimal digits, then `_` and 16 zeros (the reference server's shape,
 * whose second half is a position inside a message: we never split one). A byte-wise comparison
 * is a numeric one, and one offset means the same event to an HTTP reader and to a Cap'n Web
 * reader (offset 42 is "0000000000000042_0000000000000000"). "-1" is the start, "now" the tail.
 */
export const OFFSET_DIGITS = 16;

const INSIDE = "_0000000000000000";
const OFFSET_PATTERN = /^\d{16}_0{16}$/;

/** The protocol offset of journal offset `offset` (0 is the empty stream's tail). */
export function formatOffset(offset: number): string {
  return String(offset).padStart(OFFSET_DIGITS, "0") + INSIDE;
}

/** A parsed `offset` query parameter: the journal offset to read after, or "now". */
export type ReadFrom = { after: number } | { now: true };

/**
 * Parses an offset a client sent. Anything other than "-1", "now" or the shape above is refused
 * (undefined), so no other spelling can name a position: the caller answers 400.
 */
export function parseOffset(value: string): ReadFrom | undefined {
  if (value === "-1") return { after: 0 };
  if (value === "now") return { now: true };
  if (!OFFSET_PATTERN.test(value)) return undefined;
  const after = Number(value.slice(0, OFFSET_DIGITS));
  return Number.isSafeInteger(after) ? { after } : undefined;
}
