/**
 * Durable Streams offsets. The protocol wants opaque strings that sort in stream order; ours are
 * the journal offset written as 16 decimal digits, so a byte-wise comparison is a numeric one and
 * one offset means the same event to an HTTP reader and to a Cap'n Web reader (offset 42 is
 * "0000000000000042"). "-1" is the start of the stream and "now" its current tail.
 */
export const OFFSET_DIGITS = 16;

const OFFSET_PATTERN = /^\d{16}$/;

/** The protocol offset of journal offset `offset` (0 is the empty stream's tail). */
export function formatOffset(offset: number): string {
  return String(offset).padStart(OFFSET_DIGITS, "0");
}

/** A parsed `offset` query parameter: the journal offset to read after, or "now". */
export type ReadFrom = { after: number } | { now: true };

/**
 * Parses an offset a client sent. Anything other than "-1", "now" or 16 digits is refused
 * (undefined), so no other spelling can name a position: the caller answers 400.
 */
export function parseOffset(value: string): ReadFrom | undefined {
  if (value === "-1") return { after: 0 };
  if (value === "now") return { now: true };
  if (!OFFSET_PATTERN.test(value)) return undefined;
  const after = Number(value);
  return Number.isSafeInteger(after) ? { after } : undefined;
}
