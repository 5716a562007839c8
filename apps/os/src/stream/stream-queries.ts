import type { StreamEvent } from "iterate/types";
import { ItxError } from "iterate/errors";
import { STREAM_LIMITS, matchesPayload, validateGetEventsInput, validateWaitForEventInput } from "iterate/stream/events";
import { LIMITS, limitDetails } from "../limits.ts";
import { yieldThread } from "../limits/thread-share.ts";
import type { Journal } from "./journal.ts";
import type { SubscribeRequest } from "./stream-api.ts";

// The read-side questions a stream answers, apart from its Durable Object: which stored event a
// waiter is after, what a subscribe request asks for, and the pages its reads answer.

/** A `waitForEvent` query: the first stored match, or how to wait for a later one. */
export interface WaitQuery {
  matches(event: StreamEvent): boolean;
  /** Set when the query names types: the journal reads only those. */
  types?: string[];
  afterOffset: number;
  timeoutMs: number;
  /** The query as a TIMEOUT message names it. */
  described: string;
}

export function parseWaitQuery(input: unknown): WaitQuery {
  const query = validateWaitForEventInput(input);
  const afterOffset = query.afterOffset ?? 0;
  const types = query.type === undefined ? query.types : [query.type];
  return {
    matches: (event) =>
      event.offset > afterOffset &&
      (query.type === undefined || event.type === query.type) &&
      (query.types === undefined || query.types.includes(event.type)) &&
      (query.payload === undefined || matchesPayload(event.payload, query.payload)),
    ...(types === undefined ? {} : { types }),
    afterOffset,
    timeoutMs: query.timeoutMs,
    described: JSON.stringify({ type: query.type, types: query.types, payload: query.payload, afterOffset: query.afterOffset }),
  };
}

/**
 * The first stored event the query matches, read window by window: each statement reads at most
 * WAIT_SCAN_WINDOW_EVENTS rows (a type filter has no index, so a rare type is a scan), and the
 * thread is given up between windows. A query more than WAIT_SCAN_MAX_EVENTS behind the head is
 * refused before any is read. Events committed meanwhile are read too: the look-through ends only
 * at the head, with no turn given up between its last read and the caller's next step.
 */
export async function firstStoredMatch(journal: Journal, query: WaitQuery): Promise<StreamEvent | undefined> {
  const behind = journal.head - query.afterOffset;
  if (behind > LIMITS.WAIT_SCAN_MAX_EVENTS) {
    throw new ItxError("LIMIT_EXCEEDED", `waitForEvent looks through at most ${LIMITS.WAIT_SCAN_MAX_EVENTS} stored events, and ${behind} lie after offset ${query.afterOffset}: read them with getEvents, then wait from a later afterOffset`, {
      details: limitDetails("WAIT_SCAN_MAX_EVENTS"),
    });
  }
  let after = query.afterOffset;
  while (after < journal.head) {
    const step = scanPage(journal, query, after);
    if (step.hit) return step.hit;
    after = step.next;
    // No page is held across the turn given up: concurrent scans hold at most one at a time.
    if (after < journal.head) await yieldThread();
  }
  return undefined;
}

/**
 * One page of the look-through from `after`, within its window and READ_PAGE_MAX_BYTES: the first
 * match, or where to read on (after the page's last event, which may end short of the window
 * when the byte cap cut it, else the window's end).
 */
function scanPage(journal: Journal, query: WaitQuery, after: number): { hit?: StreamEvent; next: number } {
  const end = Math.min(after + LIMITS.WAIT_SCAN_WINDOW_EVENTS, journal.head);
  const page = journal.read(after, end + 1, STREAM_LIMITS.READ_MAX_LIMIT, query.types, LIMITS.READ_PAGE_MAX_BYTES);
  const hit = page.find(query.matches);
  if (hit) return { hit, next: hit.offset };
  const last = page.at(-1);
  return { next: last === undefined ? end : last.offset };
}

/** A subscribe request's key, starting offset and types, checked. */
export function parseSubscribeRequest(request: SubscribeRequest): { key: string; afterOffset: number; types?: string[] } {
  const afterOffset = request.afterOffset ?? 0;
  if (!Number.isSafeInteger(afterOffset) || afterOffset < 0) {
    throw new ItxError("INVALID_ARGUMENT", `afterOffset must be a non-negative integer, got ${String(afterOffset)}`);
  }
  if (typeof request.callback !== "function") throw new ItxError("INVALID_ARGUMENT", "subscribe needs a callback function");
  const key = request.key ?? crypto.randomUUID();
  if (typeof key !== "string" || key.length === 0 || key.length > 256) {
    throw new ItxError("INVALID_ARGUMENT", "a subscription key is 1-256 characters");
  }
  if (request.types !== undefined && (!Array.isArray(request.types) || request.types.some((t) => typeof t !== "string"))) {
    throw new ItxError("INVALID_ARGUMENT", "types must be an array of event types");
  }
  return { key, afterOffset, ...(request.types ? { types: request.types } : {}) };
}

/**
 * A `getEvents` page: durable events between exclusive bounds, optionally of some types, and no
 * more than READ_PAGE_MAX_BYTES of payload past the first: a shorter page than `limit` is not the
 * end of the stream, so readers go on from its last offset.
 */
export function readEventsPage(journal: Journal, input: unknown): StreamEvent[] {
  const query = validateGetEventsInput(input);
  return journal.read(query.afterOffset ?? 0, query.beforeOffset ?? Number.MAX_SAFE_INTEGER, query.limit ?? 100, query.types, LIMITS.READ_PAGE_MAX_BYTES);
}

/**
 * A `getEventsPacked` page: every type, up to READ_JSON_MAX_LIMIT events and READ_PAGE_MAX_BYTES
 * of payload past the first (as `readEventsPage`), in packed format 1 (`Journal.readPacked`) or,
 * when the reader names it, format 2 or 3 (`Journal.readPacked2`, `Journal.readPacked3`).
 */
export function readPackedPage(journal: Journal, input: unknown): string {
  const { limit, format, ...rest } = (typeof input === "object" && input !== null ? input : { invalid: input }) as Record<string, unknown>;
  if (format !== undefined && format !== 1 && format !== 2 && format !== 3) throw new ItxError("INVALID_ARGUMENT", "format is 1, 2 or 3");
  if (limit !== undefined && (!Number.isSafeInteger(limit) || (limit as number) < 1 || (limit as number) > LIMITS.READ_JSON_MAX_LIMIT)) {
    throw new ItxError("INVALID_ARGUMENT", `limit must be an integer from 1 to ${LIMITS.READ_JSON_MAX_LIMIT}`, {
      details: limitDetails("READ_JSON_MAX_LIMIT"),
    });
  }
  if ("types" in rest) throw new ItxError("INVALID_ARGUMENT", "getEventsPacked reads every type; use getEvents to filter");
  const query = validateGetEventsInput(rest);
  const read = format === 3 ? journal.readPacked3.bind(journal) : format === 2 ? journal.readPacked2.bind(journal) : journal.readPacked.bind(journal);
  return read(query.afterOffset ?? 0, query.beforeOffset ?? Number.MAX_SAFE_INTEGER, (limit as number | undefined) ?? 1000, LIMITS.READ_PAGE_MAX_BYTES);
}

/** The durable event appended with `key`, or null. */
export function findByIdempotencyKey(journal: Journal, key: string): StreamEvent | null {
  if (typeof key !== "string" || key.length === 0 || key.length > STREAM_LIMITS.IDEMPOTENCY_KEY_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", "an idempotency key is a non-empty string of at most 512 characters");
  }
  return journal.byIdempotencyKey(key) ?? null;
}
