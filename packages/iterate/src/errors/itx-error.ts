import { type ErrorCode, type ErrorDetails, isErrorCode } from "./codes.ts";

// Cap'n Web and Workers RPC rebuild a thrown error as a plain Error: the class is lost, and
// depending on the transport so are own properties. The code therefore travels twice: as an own
// `code` property and as a `[CODE] ` prefix of the message, and `errorCode()` reads either.
const MESSAGE_PREFIX = /^\[([A-Z_]+)\] /;

/**
 * An error with a code from the table. Throw it for every expected failure.
 *
 * @example
 * throw new ItxError("NOT_FOUND", `no project ${slug}`);
 */
export class ItxError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  /** What the error says beyond its code, typed per code (`ErrorDetailsByCode`). */
  readonly details?: ErrorDetails<C>;

  constructor(code: C, message: string, options?: { cause?: unknown; details?: ErrorDetails<C> }) {
    super(`[${code}] ${message}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ItxError";
    this.code = code;
    if (options?.details !== undefined) this.details = options.details;
  }
}

/** The code of any error that crossed RPC, or `undefined` when it carries none. */
export function errorCode(error: unknown): ErrorCode | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const own = (error as { code?: unknown }).code;
  if (isErrorCode(own)) return own;
  const message = (error as { message?: unknown }).message;
  if (typeof message !== "string") return undefined;
  const match = MESSAGE_PREFIX.exec(message);
  return match && isErrorCode(match[1]) ? match[1] : undefined;
}

/** The message without its `[CODE] ` prefix. */
export function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(MESSAGE_PREFIX, "");
}

/**
 * Restores the `code` property on an error that came back over RPC, so that
 * `error.code` works whichever transport carried it. Returns the same error.
 */
export function withErrorCode<E>(error: E): E {
  const code = errorCode(error);
  if (code !== undefined && typeof error === "object" && error !== null && (error as { code?: unknown }).code !== code) {
    try {
      Object.defineProperty(error, "code", { value: code, enumerable: true, configurable: true, writable: true });
    } catch {
      // A frozen error keeps its message prefix; errorCode() still reads it.
    }
  }
  return error;
}

/** True when `error` carries `code`. */
export function hasErrorCode(error: unknown, code: ErrorCode): boolean {
  return errorCode(error) === code;
}
