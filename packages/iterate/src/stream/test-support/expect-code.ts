import type { CodedError, ErrorCode } from "../../types.ts";
import { errorCode } from "../../errors/index.ts";

/**
 * Awaits `promise` (or calls `run`) expecting it to fail with `code` (or one of several codes), and answers the error so a
 * test can check its message or details. Anything else (success, another code, an uncoded error)
 * throws an Error saying what happened instead, so the test fails with it.
 *
 * @example
 * const refused = await expectCode(itx.append({ type: "events.iterate.com/itx/created" }), "PERMISSION_DENIED");
 * expect(refused.message).toContain("written only by the platform");
 */
export async function expectCode(
  /** A promise (or a value a stub's call may answer directly), or a function to call. */
  promise: unknown,
  code: ErrorCode | readonly ErrorCode[],
  label?: string,
): Promise<CodedError> {
  const codes: readonly string[] = typeof code === "string" ? [code] : code;
  const expected = codes.join(" or ");
  const where = label === undefined ? "" : ` (${label})`;
  let outcome: unknown;
  try {
    // A Workers RPC promise is callable (for pipelining) and thenable: await anything thenable.
    const thenable = (typeof promise === "object" || typeof promise === "function") && promise !== null && typeof (promise as { then?: unknown }).then === "function";
    outcome = await (!thenable && typeof promise === "function" ? (promise as () => unknown)() : promise);
  } catch (error) {
    const actual = errorCode(error);
    if (actual !== undefined && codes.includes(actual)) return error as CodedError;
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`expected ${expected}${where}, got ${actual === undefined ? "an uncoded error" : actual}: ${message}`, { cause: error });
  }
  throw new Error(`expected ${expected}${where}, but it succeeded with ${describe(outcome)}`);
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 200) ?? String(value);
  } catch {
    return String(value);
  }
}
