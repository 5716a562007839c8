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

/** The key of a coded failure answered in place of a value (see `answerCoded`). */
const FAILURE = "__itxCodedFailure";

/**
 * For methods whose values may be anything, RPC stubs included: the value itself on success (so
 * nothing about it changes), or `{ __itxCodedFailure: { code, message, details? } }` for an expected
 * failure. `throwCoded` on the other side turns the latter back into the ItxError.
 */
export async function answerCoded<T>(work: () => Promise<T>): Promise<T | { [FAILURE]: Extract<Coded<T>, { ok: false }>["error"] }> {
  try {
    return await work();
  } catch (error) {
    const code = errorCode(error);
    if (code === undefined) throw error;
    const details = (error as { details?: Record<string, unknown> }).details;
    return { [FAILURE]: { code, message: errorMessage(error), ...(details ? { details } : {}) } };
  }
}

/** The value `answerCoded` answered, or its failure thrown as an ItxError. */
export function throwCoded<T>(answer: unknown): T {
  if (typeof answer === "object" && answer !== null && FAILURE in answer) {
    const { code, message, details } = (answer as Record<typeof FAILURE, { code: ErrorCode; message: string; details?: Record<string, unknown> }>)[FAILURE];
    throw new ItxError(code, message, details ? { details } : undefined);
  }
  return answer as T;
}

/** The value, or the ItxError the other side meant to throw. */
export function unwrapCoded<T>(result: Coded<T>): T {
  if (result.ok) return result.value;
  const { code, message, details } = result.error;
  throw new ItxError(code, message, details ? { details } : undefined);
}
