import type { StreamEvent } from "iterate/types";
import { LIMITS } from "../limits.ts";
import type { Journal } from "./journal.ts";

/**
 * `stream/woken`: the fact a project's root stream records when its Durable Object comes up in a
 * new incarnation (the OS restarted or was deployed, or the object was evicted and touched again)
 * and the project has a worker. The Project processor hands it to the worker's `processEvent`
 * like the other lifecycle events, at least once. See docs/decisions/0024-stream-woken.md.
 *
 * Only the Stream writes it (platform writer "stream"), from its constructor: a constructor runs
 * once per incarnation, so nothing the worker does while the stream is up (its own appends, reads,
 * the feed's bookkeeping) can cause another. A stream that keeps dying before the worker has taken
 * its last woken (a crash loop) does not add one per crash: the pending one stands for them all
 * until it is delivered or STREAM_WOKEN_COALESCE_MS has passed.
 */

/** The type, spelled out (event type names are literals). */
export const STREAM_WOKEN = "events.iterate.com/stream/woken";

/** What the worker learns: which incarnation woke, and where the stream stood when it did. */
export interface StreamWokenPayload {
  /** A fresh id per incarnation of the stream's Durable Object. */
  incarnation: string;
  /** The stream's head when this incarnation came up: everything up to it happened before. */
  previousHead: number;
}

/** The last woken this stream recorded (kept in its `meta` table; a cache of the journal's facts). */
export interface LastWoken {
  offset: number;
  /** Milliseconds since the epoch at which it was appended. */
  at: number;
}

/** What a new incarnation knows when it decides. */
export interface WokenInputs {
  /** The stream's path: only a project's root (`/`) records woken. */
  path: string;
  head: number;
  /** Whether the project has a worker: `project/created` is on this stream. */
  projectCreated: boolean;
  last: LastWoken | null;
  /** Whether the Project processor has taken `last` off the worker's feed. */
  lastDelivered: boolean;
  now: number;
  coalesceMs: number;
}

/**
 * Whether this incarnation records a woken: only on a created project's root, and not while an
 * earlier woken still waits for the worker (unless that one is older than `coalesceMs`, so a
 * woken lost from an overfull feed does not silence every later one). Pure.
 */
export function shouldRecordWoken(inputs: WokenInputs): boolean {
  if (inputs.path !== "/" || !inputs.projectCreated) return false;
  const last = inputs.last;
  if (last === null || last.offset > inputs.head || inputs.lastDelivered) return true;
  return inputs.now - last.at >= inputs.coalesceMs;
}

/** The Project processor's idempotency key for `project/created` on the root stream. */
export const PROJECT_CREATED_KEY = "project/created";

/** The Project processor's idempotency key for the fact that settles the feed's delivery of `offset`. */
export function deliveredKey(offset: number): string {
  return `project/worker-event-delivered:${offset}`;
}

/** The `meta` row remembering the stream's last `stream/woken` (offset and time). */
export const LAST_WOKEN_KEY = "last-woken";

/** What `recordWoken` needs of the Stream Durable Object. */
export interface WokenStream {
  sql: SqlStorage;
  path: string;
  journal: Pick<Journal, "head" | "byIdempotencyKey">;
  /** Appends one event as the Stream itself (platform writer "stream"). */
  append(event: { type: string; payload: StreamWokenPayload }): StreamEvent[];
}

/** Decides, and appends `stream/woken` when this incarnation should; answers whether it did. */
export function recordWoken(stream: WokenStream): boolean {
  const row = stream.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", LAST_WOKEN_KEY).toArray()[0];
  const last = row ? (JSON.parse(row.value) as LastWoken) : null;
  const head = stream.journal.head;
  const now = Date.now();
  const record = shouldRecordWoken({
    path: stream.path,
    head,
    projectCreated: stream.journal.byIdempotencyKey(PROJECT_CREATED_KEY) !== undefined,
    last,
    lastDelivered: last !== null && stream.journal.byIdempotencyKey(deliveredKey(last.offset)) !== undefined,
    now,
    coalesceMs: LIMITS.STREAM_WOKEN_COALESCE_MS,
  });
  if (!record) return false;
  const [woken] = stream.append({ type: STREAM_WOKEN, payload: { incarnation: crypto.randomUUID(), previousHead: head } });
  if (!woken) return false;
  stream.sql.exec(
    "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    LAST_WOKEN_KEY,
    JSON.stringify({ offset: woken.offset, at: now } satisfies LastWoken),
  );
  return true;
}
