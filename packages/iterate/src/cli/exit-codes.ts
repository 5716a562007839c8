import type { ErrorCode } from "../types.ts";

/**
 * The CLI's exit status for each error code, so scripts can branch on `$?` the way programs
 * branch on `error.code`. One row per code; docs/cli.md prints this table (a test keeps the two
 * equal). 0 is success, 1 an error without a code, 2 a usage mistake caught before any call.
 */
export const EXIT_CODES: Readonly<Record<ErrorCode, number>> = {
  INVALID_ARGUMENT: 3,
  UNAUTHENTICATED: 4,
  PERMISSION_DENIED: 5,
  NOT_FOUND: 6,
  UNAVAILABLE: 7,
  TIMEOUT: 8,
  SCRIPT_FAILED: 9,
  CAPABILITY_DISCONNECTED: 10,
  IDEMPOTENCY_CONFLICT: 11,
  OFFSET_CONFLICT: 12,
  LOOP_LIMIT: 13,
  EGRESS_REFUSED: 14,
  RESOURCE_EXHAUSTED: 15,
  LIMIT_EXCEEDED: 16,
  INTERNAL: 17,
};

/** Success. */
export const EXIT_OK = 0;
/** An error that carries no code (a bug, or something outside iterate). */
export const EXIT_UNCODED = 1;
/** A usage mistake: an unknown command or option, a missing argument, unreadable input. */
export const EXIT_USAGE = 2;
