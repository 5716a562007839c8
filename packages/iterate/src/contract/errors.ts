// Errors: the codes an error carries across RPC. Part of the contract of record (types.ts).

/** The codes an error can carry across RPC. See `iterate/errors` for the helpers that read them. */
export type ErrorCode =
  | "NOT_FOUND"
  | "UNAUTHENTICATED"
  | "INVALID_ARGUMENT"
  | "CAPABILITY_DISCONNECTED"
  | "IDEMPOTENCY_CONFLICT"
  | "OFFSET_CONFLICT"
  | "LOOP_LIMIT"
  | "EGRESS_REFUSED"
  | "SCRIPT_FAILED"
  | "TIMEOUT"
  | "RESOURCE_EXHAUSTED"
  | "PERMISSION_DENIED"
  | "LIMIT_EXCEEDED"
  | "UNAVAILABLE"
  | "INTERNAL";

/** What a coded error looks like after it crossed Cap'n Web. */
export interface CodedError extends Error {
  code: ErrorCode;
  details?: Record<string, unknown>;
}
