import type { ErrorCode } from "../types.ts";

export type { ErrorCode };

/**
 * The one table of error codes: a row for each of the contract's `ErrorCode` (types.ts), with
 * what it means. Every error the platform raises on purpose carries one of these as a string `code`, and the code survives Cap'n Web and Workers RPC: callers branch on
 * `error.code`, never on `instanceof` or on message text.
 */
export const ERROR_CODES = {
  /** Missing or forbidden: the two are deliberately indistinguishable. */
  NOT_FOUND: "NOT_FOUND",
  /** Credentials were absent, malformed or rejected at `authenticate()`. */
  UNAUTHENTICATED: "UNAUTHENTICATED",
  /** The caller sent input that fails validation or a named limit. */
  INVALID_ARGUMENT: "INVALID_ARGUMENT",
  /** A live capability's provider is no longer connected. */
  CAPABILITY_DISCONNECTED: "CAPABILITY_DISCONNECTED",
  /** An idempotency key was reused with a different body. */
  IDEMPOTENCY_CONFLICT: "IDEMPOTENCY_CONFLICT",
  /** An expected offset no longer matches the head of the stream. */
  OFFSET_CONFLICT: "OFFSET_CONFLICT",
  /** A chain of reactions ran too many rounds and was stopped. */
  LOOP_LIMIT: "LOOP_LIMIT",
  /** The egress pipe refused an outbound request. */
  EGRESS_REFUSED: "EGRESS_REFUSED",
  /** A script threw or could not be compiled. */
  SCRIPT_FAILED: "SCRIPT_FAILED",
  /** A wait ran past its deadline. */
  TIMEOUT: "TIMEOUT",
  /**
   * Untrusted code used up what it may use (CPU, memory) or its isolate, runner or host died
   * under it. The code was stopped and is not run again automatically.
   */
  RESOURCE_EXHAUSTED: "RESOURCE_EXHAUSTED",
  /** The caller is authenticated but the operation needs more authority (reported as such only where existence is not secret). */
  PERMISSION_DENIED: "PERMISSION_DENIED",
  /** Stored state is larger than a named limit allows (for example a processor checkpoint). */
  LIMIT_EXCEEDED: "LIMIT_EXCEEDED",
  /** A platform part is not available right now; retrying may succeed. */
  UNAVAILABLE: "UNAVAILABLE",
  /** A bug: an invariant was broken. The message says which. */
  INTERNAL: "INTERNAL",
} as const satisfies { readonly [C in ErrorCode]: C };

const CODE_SET: ReadonlySet<string> = new Set(Object.values(ERROR_CODES));

/** True when `value` is one of the table's codes. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && CODE_SET.has(value);
}

type NoDetails = Record<never, never>;

/**
 * What `details` may say for each code: the fields a caller can branch on. Each is optional (a
 * detail is a hint beside the code). `limit` names the limit that was crossed; a registry of
 * limits (the platform's `LimitName`) narrows it with `Limit`.
 */
export interface ErrorDetailsByCode<Limit extends string = string> {
  NOT_FOUND: { unresolved?: string; jail?: string; member?: string; members?: string[]; mcpCode?: number };
  /** `url`: the OS that ended the session (a client-side close, code 4001). */
  UNAUTHENTICATED: { reason?: "malformed" | "rejected" | "revoked" | "missing"; url?: string };
  INVALID_ARGUMENT: { limit?: Limit; reason?: string; index?: number; field?: string; type?: string; path?: string; mcpCode?: number };
  CAPABILITY_DISCONNECTED: NoDetails;
  IDEMPOTENCY_CONFLICT: NoDetails;
  /** A stream's offsets are numbers; a repository's heads are commit ids (null: the branch does not exist). */
  OFFSET_CONFLICT: { expectedOffset?: number; head?: number | string | null; expected?: string | null; ref?: string; branch?: string };
  LOOP_LIMIT: { limit?: Limit; began?: string; round?: number; offset?: number; requestOffset?: number };
  EGRESS_REFUSED: { limit?: Limit; host?: string; reason?: string; secret?: string; origin?: string; header?: string };
  SCRIPT_FAILED: { requestOffset?: number };
  TIMEOUT: { limit?: Limit; requestOffset?: number; timeoutMs?: number; mcpCode?: number };
  /** `reason` "runner-died": the process running untrusted code died under the call (it is not run again). */
  RESOURCE_EXHAUSTED: { limit?: Limit; requestOffset?: number; reason?: string };
  PERMISSION_DENIED: { reason?: string; index?: number; type?: string };
  LIMIT_EXCEEDED: { limit?: Limit; bytes?: number; maxBytes?: number; slug?: string; offset?: number };
  /** `status` is a remote server's HTTP status (null: it gave none); `mcpCode` a remote MCP error code. */
  UNAVAILABLE: { limit?: Limit; reason?: string; offset?: number; status?: number | null; missing?: string; url?: string; mcpCode?: number };
  INTERNAL: NoDetails;
}

/** The details an error with `code` may carry. */
export type ErrorDetails<C extends ErrorCode = ErrorCode, Limit extends string = string> = ErrorDetailsByCode<Limit>[C];
