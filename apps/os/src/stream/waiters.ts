import type { StreamEvent } from "iterate/types";
import { ItxError } from "iterate/errors";

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

  wait(matches: (event: StreamEvent) => boolean, timeoutMs: number, describe: string): Promise<StreamEvent> {
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
