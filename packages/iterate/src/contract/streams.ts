// Streams: events, what writers hand in, and the Stream capability. Part of the contract of record (types.ts).
import type { Description } from "./discovery.ts";

/**
 * Who wrote an event. The platform stamps `origin` (the context whose code or session wrote it),
 * `principal` and `platform`; a writer's own values are dropped except `processor`.
 */
export interface EventSource {
  /** The context path whose code or session appended the event, e.g. "/agents/a". */
  origin?: string;
  /** The authenticated principal id behind the write. */
  principal?: string;
  /** Set when the platform itself wrote the event (a domain Durable Object), naming which part. */
  platform?: string;
  /** The slug of the processor that appended it; the one field a writer may set. */
  processor?: string;
  /**
   * Set when code wrote the event in reaction to another event (a script an agent's turn ran, a
   * processor's answer): where the chain of reactions began and how many rounds it has run.
   */
  reaction?: Reaction;
}

/** A chain of reactions: code reacting to other code's output, round after round. */
export interface Reaction {
  /** The event that began the chain, as `<streamPath>#<offset>`. */
  began: string;
  /** 1 for code reacting to the first event, 2 for code reacting to that code's writes, ... */
  round: number;
}

/** An event as stored in (or, when ephemeral, passed through) a stream. */
export interface StreamEvent<Type extends string = string, Payload = unknown> {
  /** The stream's path inside its project, e.g. "/" or "/agents/a". */
  streamPath: string;
  /**
   * Position in the stream. Durable events are numbered 1, 2, 3, ... with no gaps. An ephemeral
   * event carries the offset of the durable event it follows (the head when it was sent).
   */
  offset: number;
  type: Type;
  payload: Payload;
  /** ISO-8601 time the stream committed it. */
  createdAt: string;
  source: EventSource;
  idempotencyKey?: string;
  /** Present and true for events that were never stored. */
  ephemeral?: true;
}

/** What a writer hands to `append`. Everything else is stamped by the stream. */
export interface EventInput<Type extends string = string, Payload = unknown> {
  type: Type;
  payload?: Payload;
  /** Same key and same body returns the stored event; a different body fails with IDEMPOTENCY_CONFLICT. */
  idempotencyKey?: string;
  /** Never stored: reaches only live subscribers connected at that moment. */
  ephemeral?: boolean;
  /** Only `processor` survives; the platform stamps the rest. */
  source?: EventSource;
}

export interface AppendOptions {
  /** Fails with OFFSET_CONFLICT unless the head is exactly this offset when the append commits. */
  expectedOffset?: number;
}

/** What `appendBatch` answers: each input's offset in order, and the head after the commit. */
export interface AppendReceipt {
  offsets: number[];
  head: number;
}

export interface GetEventsInput {
  /** Exclusive lower bound; 0 (the default) reads from the start. */
  afterOffset?: number;
  /** Exclusive upper bound. */
  beforeOffset?: number;
  /** Only these types. */
  types?: string[];
  /** At most this many events (1-500, default 100). */
  limit?: number;
}

export interface WaitForEventInput {
  type?: string;
  /** Any of these types (instead of `type`). */
  types?: string[];
  /** Every key given must equal the event payload's value at that key (deep equality). */
  payload?: Record<string, unknown>;
  /** Only events after this offset count; 0 (the default) includes the whole history. */
  afterOffset?: number;
  /** Fails with TIMEOUT after this long (at most 300,000). */
  timeoutMs: number;
}

/** One page of `Stream.readEvents`. */
export interface EventPage {
  events: StreamEvent[];
  /** Pass as `afterOffset` to read the next page. */
  nextAfterOffset: number;
  /** True when this page reached the head. */
  done: boolean;
}

/** An append-only event stream. */
export interface Stream {
  __describe(): Description & { path: string; head: number };
  head(): number;
  /** One commit for all events. Answers them as stored. */
  append(...events: EventInput[]): StreamEvent[];
  /**
   * The bulk writer's append: one commit answered with each input's offset and the new head.
   * `events` may be an array or, cheapest over the wire, one JSON string holding that array.
   * Fails with OFFSET_CONFLICT unless the head is still `expectedOffset` (when given).
   */
  appendBatch(input: { events: EventInput[] | string } & AppendOptions): AppendReceipt;
  getEvents(input?: GetEventsInput): StreamEvent[];
  readEvents(input?: { afterOffset?: number; limit?: number }): EventPage;
  /**
   * Up to 10,000 events (no type filter) as one packed JSON string, the fast path for bulk reads.
   * Format 1 (the default): `{ streamPath, sources, times, rows: [[offset, type, payload, timeIndex, sourceIndex, idempotencyKey | null], ...] }`.
   * Format 2 (`format: 2`): `{ format: 2, streamPath, from, types: { id: type }, sources: { id: source }, rows: [[typeId, payload, sourceId, idempotencyKey | null, createdAtMs], ...] }`:
   * row i is offset `from + i`.
   * Format 3 (`format: 3`): `{ format: 3, streamPath, from, types, sources, keys: { offset: idempotencyKey }, runs: [offset, typeId, sourceId, createdAtMs, ...], payloads: [...] }`:
   * payload i is offset `from + i`; a run says what the events from its offset to the next run's share.
   * `unpackEvents` and `readEvents` from iterate/client turn any of them into events.
   */
  getEventsPacked(input?: Omit<GetEventsInput, "types"> & { format?: 1 | 2 | 3 }): string;
  waitForEvent(input: WaitForEventInput): StreamEvent;
  /** The durable event stored under an idempotency key, or null. */
  getByIdempotencyKey(key: string): StreamEvent | null;
  /** Replays durable events after `afterOffset`, then tails live (ephemeral events too). */
  subscribe(
    callback: (events: StreamEvent[]) => void | Promise<void>,
    options?: { key?: string; afterOffset?: number; types?: string[] },
  ): { key: string; afterOffset: number; head: number };
  unsubscribe(key: string): boolean;
}
