import { type ErrorCode, ItxError, errorCode, errorMessage } from "iterate/errors";

/**
 * An answer across a Durable Object boundary that carries an expected failure as a value. A DO
 * method that throws is recorded (and printed by `wrangler dev`) as an uncaught exception with its
 * stack, even when the error is a coded, expected outcome; returning it keeps logs for what needs
 * attention. The caller turns it back into the ItxError with `unwrapCoded`.
 */
export type Coded<T> =
  | { ok: true; value: T }
  | { ok: false; error: { code: ErrorCode; message: string; details?: Record<string, unknown> } };

/** Runs `work`; a coded error becomes `{ ok: false }`, anything else still throws (a bug). */
export async function asCoded<T>(work: () => T | Promise<T>): Promise<Coded<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    const code = errorCode(error);
    if (code === undefined) throw error;
    const details = (error as { details?: Record<string, unknown> }).details;
    return { ok: false, error: { code, message: errorMessage(error), ...(details ? { details } : {}) } };
  }
}

/** `asCoded` for synchronous work: no promise, so a Durable Object's answer costs nothing extra. */
export function codedSync<T>(work: () => T): Coded<T> {
  try {
    return { ok: true, value: work() };
  } catch (error) {
    const code = errorCode(error);
    if (code === undefined) throw error;
    const details = (error as { details?: Record<string, unknown> }).details;
    return { ok: false, error: { code, message: errorMessage(error), ...(details ? { details } : {}) } };
  }
}

/** The value, or the ItxError the other side meant to throw. */
export function unwrapCoded<T>(result: Coded<T>): T {
  if (result.ok) return result.value;
  const { code, message, details } = result.error;
  throw new ItxError(code, message, details ? { details } : undefined);
}
