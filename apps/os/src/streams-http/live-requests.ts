import { LIMITS } from "../limits.ts";

/**
 * Counts the live reads (long-polls and SSE responses) one Worker isolate is holding open. Each
 * stream keeps at most STREAMS_HTTP_LIVE_WAITERS_MAX of them, but a caller could spread them over
 * many streams; this bounds them per isolate, which every project shares.
 */
export class LiveRequestGate {
  readonly #max: number;
  #open = 0;

  constructor(max: number) {
    this.#max = max;
  }

  /** Takes a slot; false when all are held (the caller answers 503). */
  enter(): boolean {
    if (this.#open >= this.#max) return false;
    this.#open += 1;
    return true;
  }

  /** Gives back a slot `enter` took. */
  leave(): void {
    if (this.#open > 0) this.#open -= 1;
  }

  get open(): number {
    return this.#open;
  }
}

/** The isolate's gate for /streams (STREAMS_HTTP_LIVE_REQUESTS_MAX). */
export const LIVE_REQUESTS = new LiveRequestGate(LIMITS.STREAMS_HTTP_LIVE_REQUESTS_MAX);
