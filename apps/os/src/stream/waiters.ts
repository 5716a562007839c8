import type { StreamEvent } from "iterate/types";
import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";

interface Waiter {
  matches(event: StreamEvent): boolean;
  resolve(event: StreamEvent): void;
}

/** Callers parked in `waitForEvent` until a matching durable event commits or their time runs out. */
export class Waiters {
  readonly #waiters = new Set<Waiter>();

  get size(): number {
    return this.#waiters.size;
  }

  // Callers looking through history before they wait (firstStoredMatch): they count as waiting.
  #scanning = 0;

  /**
   * Runs `scan` (the look-through of history before a wait) as one of this stream's waiters:
   * LIMIT_EXCEEDED when STREAM_WAITERS_MAX wait or scan already.
   */
  async scanning<T>(scan: () => Promise<T>): Promise<T> {
    this.checkRoom();
    this.#scanning += 1;
    try {
      return await scan();
    } finally {
      this.#scanning -= 1;
    }
  }

  /** LIMIT_EXCEEDED when STREAM_WAITERS_MAX callers wait already: each one is matched against every commit. */
  checkRoom(): void {
    if (this.#waiters.size + this.#scanning < LIMITS.STREAM_WAITERS_MAX) return;
    throw new ItxError("LIMIT_EXCEEDED", `at most ${LIMITS.STREAM_WAITERS_MAX} callers wait for events on one stream at a time; subscribe to follow it instead`, {
      details: limitDetails("STREAM_WAITERS_MAX"),
    });
  }

  wait(matches: (event: StreamEvent) => boolean, timeoutMs: number, describe: string): Promise<StreamEvent> {
    this.checkRoom();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        matches,
        resolve: (event) => {
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          resolve(event);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new ItxError("TIMEOUT", `no event matching ${describe} arrived within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /** Offers newly committed events to every waiter. */
  offer(events: readonly StreamEvent[]): void {
    if (this.#waiters.size === 0) return;
    for (const waiter of this.#waiters) {
      const hit = events.find((event) => waiter.matches(event));
      if (hit) waiter.resolve(hit);
    }
  }
}
