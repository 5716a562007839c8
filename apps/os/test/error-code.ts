import { errorCode } from "iterate/errors";

/** The code a call failed with, "resolved" when it did not fail, or a marker for an uncoded error. */
export async function codeOf(promise: unknown): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return errorCode(error) ?? `uncoded: ${String(error)}`;
  }
  return "resolved";
}
