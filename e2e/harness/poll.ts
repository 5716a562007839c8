import { errorCode } from "iterate/errors";
import type { ErrorCode } from "iterate/types";

/** How long `until` keeps asking, how often, and which failures of `read` mean "ask again". */
export interface UntilOptions {
  /** Give up after this long (default 20 s): `until` then throws, naming the last value. */
  timeoutMs?: number;
  /** Pause between reads (default 100 ms). */
  intervalMs?: number;
  /** Codes a failed read may answer while the thing it waits for settles; any other failure throws at once. */
  retryOn?: readonly ErrorCode[];
}

/**
 * Reads until the value is there and answers it: with only `read`, until it answers something
 * other than `undefined`; with `done`, until `done(value)` holds. `expect.poll` fits an assertion;
 * this fits a value a test goes on to use (a run's events, a built worker's answer).
 *
 * @example
 * const fired = await until(() => itx.getEvents({ types: ["itx/schedule-fired"] }), (events) => events.length >= 2);
 * const reply = await until(async () => (await itx.getEvents()).find((event) => event.type === "agent/message-sent"));
 */
export async function until<T>(read: () => Promise<T | undefined>, options?: UntilOptions): Promise<T>;
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, options?: UntilOptions): Promise<T>;
export async function until<T>(
  read: () => Promise<T | undefined>,
  doneOrOptions?: ((value: T) => boolean) | UntilOptions,
  maybeOptions: UntilOptions = {},
): Promise<T> {
  const done = typeof doneOrOptions === "function" ? doneOrOptions : (value: T | undefined) => value !== undefined;
  const { timeoutMs = 20_000, intervalMs = 100, retryOn = [] } = (typeof doneOrOptions === "function" ? maybeOptions : doneOrOptions) ?? {};
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let value: T | undefined;
    let answered = false;
    try {
      value = await read();
      answered = true;
    } catch (error) {
      const code = errorCode(error);
      if (code === undefined || !retryOn.includes(code) || Date.now() > deadline) throw error;
    }
    if (answered && done(value as T)) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting; last value ${describe(value)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

function describe(value: unknown): string {
  try {
    return (JSON.stringify(value) ?? String(value)).slice(0, 500);
  } catch {
    return String(value);
  }
}
