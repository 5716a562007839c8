import type { EngineClock } from "../processor/host.ts";

/** A clock tests control. */
export interface FakeClock extends EngineClock {
  /** Moves time forward. */
  advance(ms: number): void;
  /** Every duration `sleep` was asked for, in order: the backoffs a test can assert. */
  readonly sleeps: readonly number[];
}

/**
 * A fake clock starting at `start` (default 2026-01-01). `sleep(ms)` does not wait: it moves time
 * forward by `ms` and returns at once, so that backoffs take no real time.
 *
 * @example
 * const clock = fakeClock();
 * await clock.sleep(1_000); // clock.now() is 1 s later, and clock.sleeps is [1000]
 */
export function fakeClock(start = Date.UTC(2026, 0, 1)): FakeClock {
  let now = start;
  const sleeps: number[] = [];
  return {
    now: () => now,
    advance(ms) {
      now += ms;
    },
    sleep(ms) {
      sleeps.push(ms);
      now += Math.max(0, ms);
      return Promise.resolve();
    },
    sleeps,
  };
}
