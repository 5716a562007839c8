/**
 * Bytes of work (inflated, hashed, walked) one task does on a Durable Object's thread between two
 * yields: about 10-20 ms of inflating and hashing here. Locally every object shares one thread.
 */
export const THREAD_SHARE_BYTES = 2 * 1024 * 1024;

/**
 * Counts the work of one long task on a Durable Object's thread (a push's passes over its
 * objects) and gives the thread up for a turn after every `budget` bytes of it, so that other
 * objects' calls go on between its steps instead of waiting for all of them. Locally the whole OS
 * is one thread: without this, one large push held every project for seconds.
 *
 * Counted in bytes, not milliseconds: time inside workerd advances only across I/O, so a clock read
 * in the middle of synchronous work does not see the work.
 *
 * @example
 * const share = new ThreadShare();
 * for (const object of objects) { inflate(object); await share.did(object.size); }
 */
export class ThreadShare {
  readonly #budget: number;
  #since = 0;

  constructor(budget: number = THREAD_SHARE_BYTES) {
    this.#budget = budget;
  }

  /** Counts `bytes` of work done; yields the thread once a budget's worth has been done since the last yield. */
  async did(bytes: number): Promise<void> {
    this.#since += bytes;
    if (this.#since < this.#budget) return;
    this.#since = 0;
    await yieldThread();
  }
}

/** One turn of the event loop: what other calls waiting for this thread need to run. */
export function yieldThread(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
