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

/** The code and message a call failed with; `code` is "resolved" when it did not fail. */
export async function rejectionOf(promise: unknown): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return { code: errorCode(error) ?? "uncoded", message: error instanceof Error ? error.message : String(error) };
  }
  return { code: "resolved", message: "" };
}
