import type { StreamEvent } from "../types.ts";
import { errorCode, errorMessage } from "../errors/index.ts";
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
 * requested while the current one is consumed. The OS may answer a page short (it bounds a page's
 * bytes): the rest of that page's range is then asked for next, ahead of the pages already
 * requested. Pages come in packed format 3; an OS that does not know it yet (it refuses the
 * format) is read in format 2.
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
  let format: 2 | 3 = 3;
  const inFlight: PageRequest[] = [];
  let next = start;
  // The events with `afterOffset < offset <= until`, or their first part.
  const request = (afterOffset: number, until: number): PageRequest => {
    // One native promise per page (an RPC promise is awaited once). A page requested ahead may be
    // refused while an earlier one is awaited: its rejection is observed when its turn comes, or
    // dropped with the rest after a fallback.
    const page = Promise.resolve(stream.getEventsPacked({ afterOffset, beforeOffset: until + 1, limit: pageSize, format }));
    page.catch(() => undefined);
    return { afterOffset, until, page };
  };
  const fill = () => {
    while (inFlight.length <= prefetch && next < head) {
      const until = Math.min(head, next + pageSize);
      inFlight.push(request(next, until));
      next = until;
    }
  };
  fill();
  while (inFlight.length > 0) {
    const { afterOffset, until, page } = inFlight.shift() as PageRequest;
    let text: string;
    try {
      text = await page;
    } catch (error) {
      if (format !== 3 || !refusesFormat(error)) throw error;
      // An older OS: the pages asked for since are refused too; ask again from here in format 2.
      format = 2;
      inFlight.length = 0;
      next = afterOffset;
      fill();
      continue;
    }
    fill();
    const events = unpackEvents(text);
    const last = events.at(-1);
    // A short page is not the end: the rest of its range comes next.
    if (last && last.offset < until) inFlight.unshift(request(last.offset, until));
    if (events.length > 0) yield events;
  }
}

/** A page asked for and not yet consumed. */
interface PageRequest {
  afterOffset: number;
  /** The last offset the page was asked to reach. */
  until: number;
  page: Promise<string>;
}

function refusesFormat(error: unknown): boolean {
  return errorCode(error) === "INVALID_ARGUMENT" && /\bformat\b/.test(errorMessage(error));
}
