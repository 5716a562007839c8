/**
 * Every limit the OS puts on untrusted input, in one place. Each says what it protects; each has
 * a test that crosses it and expects a coded error.
 */
export const LIMITS = {
  /** Longest secret or token accepted in credentials: bounds hashing and comparison work. */
  CREDENTIAL_STRING_MAX_LENGTH: 4096,
  /** Longest principal id an impersonation may name: ids are stamped onto every event. */
  PRINCIPAL_ID_MAX_LENGTH: 256,
  /** Most project ids one impersonated principal may carry: the set is checked on every access. */
  IMPERSONATED_PROJECT_IDS_MAX: 1000,
} as const;
