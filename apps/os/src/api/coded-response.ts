import { type ErrorCode, errorCode, errorMessage } from "iterate/errors";
import { logUncoded } from "../logging/log-limiter.ts";

const STATUS: Partial<Record<ErrorCode, number>> = {
  NOT_FOUND: 404,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

/**
 * The HTTP answer for an error: a coded one is the caller's doing (400, or its own status) with
 * its code and message; anything else is the OS's, logged through the limiter and answered 500
 * with no stack, no file path and no message of its own.
 */
export function codedErrorResponse(error: unknown, context: string): Response {
  const code = errorCode(error);
  if (code !== undefined) return Response.json({ code, message: errorMessage(error) }, { status: STATUS[code] ?? 400 });
  logUncoded(context, error);
  return Response.json({ code: "INTERNAL", message: "the OS could not serve this request" }, { status: 500 });
}
