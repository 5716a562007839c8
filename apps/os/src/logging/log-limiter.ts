import { errorCode } from "iterate/errors";
import { LIMITS } from "../limits.ts";

// Logs are for what needs attention. Expected outcomes (a coded ItxError) and a client going away
// are not errors of the OS and are not logged as such. What is logged may be provoked by untrusted
// input again and again, so it passes a limiter: a few lines per window, then one summary line.

/** Lines the OS logs per window; past it, lines are counted and summarised. */
export const LOG_LINES_PER_WINDOW = 10;

export interface LogSink {
  error(...args: unknown[]): void;
}

/**
 * At most LOG_LINES_PER_WINDOW lines per LIMITS.LOG_WINDOW_MS; the lines past it are counted by their
 * first argument (the message), and the first line of the next window that logs anything is a
 * summary: "suppressed K similar messages (...)". A Worker has no timer outside a request, so the
 * summary waits for the next line rather than a clock.
 */
export class LogLimiter {
  readonly #sink: LogSink;
  readonly #now: () => number;
  #windowStart = Number.NEGATIVE_INFINITY;
  #lines = 0;
  #suppressed = new Map<string, number>();
  #suppressedOther = 0;

  constructor(sink: LogSink = console, now: () => number = Date.now) {
    this.#sink = sink;
    this.#now = now;
  }

  error(message: string, ...rest: unknown[]): void {
    const now = this.#now();
    if (now - this.#windowStart >= LIMITS.LOG_WINDOW_MS) {
      this.#windowStart = now;
      this.#lines = 0;
      this.#flushSummary();
    }
    if (this.#lines < LOG_LINES_PER_WINDOW) {
      this.#lines += 1;
      this.#sink.error(message, ...rest);
      return;
    }
    const count = this.#suppressed.get(message);
    if (count !== undefined) this.#suppressed.set(message, count + 1);
    else if (this.#suppressed.size < LIMITS.LOG_SUMMARY_KEYS_MAX) this.#suppressed.set(message, 1);
    else this.#suppressedOther += 1;
  }

  #flushSummary(): void {
    const total = [...this.#suppressed.values()].reduce((sum, count) => sum + count, 0) + this.#suppressedOther;
    if (total === 0) return;
    const named = [...this.#suppressed].map(([message, count]) => `${count}× ${message}`);
    if (this.#suppressedOther > 0) named.push(`${this.#suppressedOther}× other`);
    this.#sink.error(`suppressed ${total} similar messages (${named.join("; ")})`);
    this.#lines += 1;
    this.#suppressed = new Map();
    this.#suppressedOther = 0;
  }
}

// Messages of a client (or a live provider) that went away: ordinary, not the OS's fault.
const DISCONNECT_MESSAGES = [
  "Peer closed WebSocket",
  "WebSocket connection failed",
  "Network connection lost",
  "The execution context which hosts this callback is no longer running",
  "RPC session was shut down by disconnect",
  "RPC session failed",
  "Durable Object reset because its code was updated",
  "client closed the connection",
];

/** True for a client disconnect: an ordinary end of a connection, not an error of the OS. */
export function isClientDisconnect(error: unknown): boolean {
  const message = error instanceof Error ? error.message : typeof error === "string" ? error : "";
  if ((error as { details?: { reason?: unknown } } | null)?.details?.reason === "client-disconnected") return true;
  return DISCONNECT_MESSAGES.some((text) => message.includes(text));
}

// capnweb's and workerd's answers to a call of a method the target does not have: the caller's
// mistake (any client can send one), answered to it as is, not an error of the OS.
const MISSING_METHOD = [/^'[^']*' is not a function\.?$/, /^The RPC receiver does not implement the method "[^"]*"\.?$/];

/** True for a call of a method that does not exist: the caller's mistake. */
export function isMissingMethodCall(error: unknown): boolean {
  return error instanceof TypeError && MISSING_METHOD.some((pattern) => pattern.test(error.message));
}

const limiter = new LogLimiter();

/**
 * Logs a line through the OS's limiter, for what untrusted input can provoke again and again (a
 * project's own code failing, say). `message` is constant, so the summary counts it as one; the
 * particulars go in `rest`.
 */
export function logLimited(message: string, ...rest: unknown[]): void {
  limiter.error(message, ...rest);
}

/**
 * Logs an error that needs attention, through the OS's limiter. A coded error (an expected
 * outcome), a client disconnect and a call of a missing method are not logged.
 */
export function logUncoded(context: string, error: unknown): void {
  if (errorCode(error) !== undefined || isClientDisconnect(error) || isMissingMethodCall(error)) return;
  limiter.error(context, error);
}
