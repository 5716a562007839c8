import type { EventInput, StreamEvent } from "../../types.ts";

/**
 * The stream an engine reads and appends to. The platform's Stream capability fits it, and so
 * does `memoryStream()` from `iterate/stream/test-support`.
 *
 * @example
 * const stream: ProcessorStream = {
 *   read: ({ afterOffset, limit }) => itxStream.getEvents({ afterOffset, limit }),
 *   head: () => itxStream.head(),
 *   append: (...inputs) => itxStream.append(...inputs),
 * };
 */
export interface ProcessorStream {
  /** Durable events with an offset above `afterOffset`, oldest first, at most `limit` (1-500) of them. */
  read(input: { afterOffset: number; limit: number }): Promise<StreamEvent[]>;
  /** The offset of the last durable event; 0 for an empty stream. */
  head(): Promise<number>;
  /** Appends every input in one commit and answers the stored events in order. */
  append(...inputs: EventInput[]): Promise<StreamEvent[]>;
}

/**
 * The key-value storage an engine keeps checkpoints and background claims in. Values must survive
 * structured cloning. The shape is a subset of a Durable Object's `ctx.storage`, so that object
 * fits as it is; `memoryStorage()` from `iterate/stream/test-support` is the in-memory one.
 *
 * @example
 * new ProcessorEngine({ stream, storage: this.ctx.storage, processors });
 */
export interface ProcessorStorage {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  /**
   * True when the key existed. With `allowUnconfirmed`, what the host sends next need not wait for
   * this write to be durable (a Durable Object's output gate): only for deletes whose loss in a
   * crash is harmless.
   */
  delete(key: string, options?: { allowUnconfirmed?: boolean }): Promise<boolean>;
  /** Every entry whose key starts with `prefix`, in key order. */
  list(options: { prefix: string }): Promise<Map<string, unknown>>;
}

/** Time as the engine sees it; tests pass a fake one. */
export interface EngineClock {
  /** Epoch milliseconds. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** The real clock. */
export const systemClock: EngineClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Where a processor's checkpoint lives in storage. */
export function checkpointKey(slug: string): string {
  return `processor/${slug}/checkpoint`;
}

/** The prefix of every background claim of a processor. */
export function claimPrefix(slug: string): string {
  return `processor/${slug}/claim/`;
}

/** Where one background claim lives in storage. */
export function claimKey(slug: string, key: string): string {
  return `${claimPrefix(slug)}${key}`;
}
