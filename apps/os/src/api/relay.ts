import { withErrorCode } from "iterate/errors";

/**
 * Awaits a value that may have come over Workers RPC and, if it failed, puts the error's `code`
 * back as a property (Workers RPC may drop own properties) before it crosses Cap'n Web.
 */
export async function relay<T>(value: T | Promise<T>): Promise<T> {
  try {
    return await value;
  } catch (error) {
    throw withErrorCode(error);
  }
}
