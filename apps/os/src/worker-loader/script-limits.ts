/** Limits on scripts, which are untrusted code. Each has a test that crosses it. */
export const SCRIPT_LIMITS = {
  /** Characters of script source: it is stored in the run-requested event. */
  SOURCE_MAX_LENGTH: 64_000,
  /** Wall-clock time one run may take before it ends with TIMEOUT. */
  TIMEOUT_MS: 30_000,
  /** Bytes of JSON a script may return: the result is stored in the run-settled event. */
  RESULT_MAX_BYTES: 131_072,
} as const;
