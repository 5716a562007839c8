/**
 * Every limit a stream puts on untrusted input, in one place. The platform's Stream Durable
 * Object and the in-memory stream of `iterate/stream/test-support` enforce the same numbers, and
 * an error that names one carries its key in `details.limit`.
 *
 * @example
 * if (batch.length > STREAM_LIMITS.APPEND_MAX_EVENTS) splitIntoSeveralAppends(batch);
 */
export const STREAM_LIMITS = {
  /** Characters in an event type. Types are keys in indexes and subscription filters; a long one costs on every row. */
  EVENT_TYPE_MAX_LENGTH: 256,
  /** UTF-8 bytes of one event input as JSON. Keeps a single row, and every reader's copy of it, small. */
  EVENT_MAX_BYTES: 262_144,
  /** Events in one append call. One call is one commit; this bounds how long the commit holds the stream. */
  APPEND_MAX_EVENTS: 500,
  /** UTF-8 bytes of all events in one append call together: the memory one commit may take. */
  APPEND_MAX_BYTES: 1_048_576,
  /** Nesting of arrays and objects in a payload. Stops a deep payload from exhausting a reader's stack. */
  PAYLOAD_MAX_DEPTH: 32,
  /** Characters in an idempotency key. Keys are indexed and compared on every keyed append. */
  IDEMPOTENCY_KEY_MAX_LENGTH: 512,
  /** Events one read may return. Bounds the size of a single response and of a processor's batch. */
  READ_MAX_LIMIT: 500,
  /**
   * Types one read or wait may filter on. Each is a bound parameter of one query, and Durable
   * Object SQLite allows 100 per statement (the read takes 4 of its own): past it, a read would fail
   * with a SQLite error instead of a coded one.
   */
  READ_MAX_TYPES: 64,
  /** How long one waitForEvent may hold a connection open, in milliseconds. */
  WAIT_MAX_TIMEOUT_MS: 300_000,
  /**
   * UTF-8 bytes of a waitForEvent `payload` pattern as JSON. A waiter is matched against every event
   * its stream commits, so its pattern's size is work on every append.
   */
  WAIT_PATTERN_MAX_BYTES: 4_096,
} as const;

/** The name of one stream limit, as it appears in an error's `details.limit`. */
export type StreamLimit = keyof typeof STREAM_LIMITS;

/** How many events a read returns when the caller does not say. */
export const READ_DEFAULT_LIMIT = 100;
