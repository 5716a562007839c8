import type { StreamEvent } from "../types.ts";

/** The part of a Stream handle the reader needs. */
export interface ReadableStream {
  head(): PromiseLike<number>;
  getEventsPacked(input: { afterOffset?: number; beforeOffset?: number; limit?: number; format?: 1 | 2 }): PromiseLike<string>;
}

export interface ReadEventsOptions {
  /** Start after this offset (0, the default, is the beginning). */
  afterOffset?: number;
  /** Events per page (at most 10,000). */
  pageSize?: number;
  /** Pages requested ahead of the one being consumed. */
  prefetch?: number;
}

/**
 * Reads a stream from `afterOffset` to the head it has when reading starts, page by page.
 * Durable offsets are gapless, so page boundaries are known in advance and the next pages are
 * requested while the current one is consumed.
 *
 * @example
 * for await (const page of readEvents(session.streams.get("/orders"))) {
 *   for (const event of page) fold(event);
 * }
 */
export async function* readEvents(stream: ReadableStream, options: ReadEventsOptions = {}): AsyncGenerator<StreamEvent[]> {
  const start = options.afterOffset ?? 0;
  const pageSize = options.pageSize ?? 5_000;
  const prefetch = Math.max(0, options.prefetch ?? 2);
  const head = await stream.head();
  const inFlight: Array<PromiseLike<string>> = [];
  let next = start;
  const request = (afterOffset: number): number => {
    const until = Math.min(head, afterOffset + pageSize);
    inFlight.push(stream.getEventsPacked({ afterOffset, beforeOffset: until + 1, limit: pageSize, format: 2 }));
    return until;
  };
  for (let pages = 0; pages <= prefetch && next < head; pages++) next = request(next);
  while (inFlight.length > 0) {
    const text = await (inFlight.shift() as PromiseLike<string>);
    if (next < head) next = request(next);
    const page = unpackEvents(text);
    if (page.length > 0) yield page;
  }
}

type PackedRow = [offset: number, type: string, payload: unknown, time: number, source: number, idempotencyKey: string | null];

interface PackedPage {
  streamPath: string;
  sources: StreamEvent["source"][];
  times: string[];
  rows: PackedRow[];
}

interface PackedPage2 {
  format: 2;
  streamPath: string;
  /** The offset of the first row; row i is `from + i` (offsets are gapless). */
  from: number;
  types: Record<string, string>;
  sources: Record<string, StreamEvent["source"]>;
  rows: Array<[typeId: number, payload: unknown, sourceId: number, idempotencyKey: string | null, createdAtMs: number]>;
}

/** Turns a `getEventsPacked` page (format 1 or 2) back into events. */
export function unpackEvents(text: string): StreamEvent[] {
  const page = JSON.parse(text) as PackedPage | PackedPage2;
  if ("format" in page && page.format === 2) return unpackFormat2(page);
  const { streamPath, sources, times, rows } = page as PackedPage;
  const events: StreamEvent[] = [];
  for (let i = 0; i < rows.length; i++) {
    const [offset, type, payload, time, source, idempotencyKey] = rows[i] as PackedRow;
    const event: StreamEvent = {
      streamPath,
      offset,
      type,
      payload,
      createdAt: times[time] as string,
      source: { ...sources[source] },
    };
    if (idempotencyKey !== null) event.idempotencyKey = idempotencyKey;
    events.push(event);
  }
  return events;
}

function unpackFormat2({ streamPath, from, types, sources, rows }: PackedPage2): StreamEvent[] {
  const events: StreamEvent[] = [];
  // Events appended together share one time: each distinct one is formatted once.
  let lastAt = Number.NaN;
  let createdAt = "";
  for (let i = 0; i < rows.length; i++) {
    const [typeId, payload, sourceId, idempotencyKey, at] = rows[i] as PackedPage2["rows"][number];
    if (at !== lastAt) {
      lastAt = at;
      createdAt = new Date(at).toISOString();
    }
    const event: StreamEvent = { streamPath, offset: from + i, type: types[typeId] as string, payload, createdAt, source: { ...sources[sourceId] } };
    if (idempotencyKey !== null) event.idempotencyKey = idempotencyKey;
    events.push(event);
  }
  return events;
}
