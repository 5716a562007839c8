import type { EventSource, StreamEvent } from "../../types.ts";

/** An event as a test writes it: a type, and whatever else it cares about. */
export interface PartialEvent {
  type: string;
  payload?: unknown;
  offset?: number;
  ephemeral?: boolean;
  idempotencyKey?: string;
  source?: EventSource;
  streamPath?: string;
  createdAt?: string;
}

/** The time every filled-in event says it was committed, so that tables stay deterministic. */
export const TEST_EPOCH = "2026-01-01T00:00:00.000Z";

/**
 * A full StreamEvent from a partial one: offset (the argument, then `partial.offset`, then 1),
 * `{}` payload, stream path "/", empty source and a fixed createdAt fill in what is missing.
 *
 * @example
 * committedEvent({ type: "demo/ping" }, 3); // { streamPath: "/", offset: 3, type: "demo/ping", payload: {}, ... }
 */
export function committedEvent(partial: PartialEvent, offset?: number): StreamEvent {
  const event: StreamEvent = {
    streamPath: partial.streamPath ?? "/",
    offset: offset ?? partial.offset ?? 1,
    type: partial.type,
    payload: partial.payload ?? {},
    createdAt: partial.createdAt ?? TEST_EPOCH,
    source: partial.source ?? {},
  };
  if (partial.idempotencyKey !== undefined) event.idempotencyKey = partial.idempotencyKey;
  if (partial.ephemeral === true) event.ephemeral = true;
  return event;
}

/**
 * Numbers a list of partial events the way a stream would: durable ones 1, 2, 3, ... (or from an
 * explicit offset on), ephemeral ones with the offset of the durable event before them.
 */
export function committedEvents(partials: readonly PartialEvent[]): StreamEvent[] {
  let head = 0;
  return partials.map((partial) => {
    if (partial.ephemeral === true) return committedEvent(partial, partial.offset ?? head);
    head = partial.offset ?? head + 1;
    return committedEvent(partial, head);
  });
}
