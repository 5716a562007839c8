import type { StreamEvent } from "../types.ts";
import { unpackEvents } from "../stream/events/packed-page.ts";

export { unpackEvents };

/** The part of a Stream handle the reader needs. */
export interface ReadableStream {
  head(): PromiseLike<number>;
  getEventsPacked(input: { afterOffset?: number; beforeOffset?: number; limit?: number; format?: 1 | 2 | 3 }): PromiseLike<string>;
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
    inFlight.push(stream.getEventsPacked({ afterOffset, beforeOffset: until + 1, limit: pageSize, format: 3 }));
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
