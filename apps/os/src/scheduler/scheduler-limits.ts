/** Every limit of the scheduler, with what it protects. Each has a test that crosses it. */
export const SCHEDULER_LIMITS = {
  /** Schedules one context may hold: each is a row of the fold's checkpoint and a firing to drive. */
  SCHEDULES_PER_CONTEXT_MAX: 100,
  /** Shortest `every`, in seconds: each occurrence runs a script in an isolate. */
  EVERY_MIN_SECONDS: 1,
  /** Longest `every`, in seconds (one year): keeps occurrence times far inside safe integers. */
  EVERY_MAX_SECONDS: 31_536_000,
  /** Longest schedule script: it is stored in the defining event and folded into every checkpoint. */
  SCRIPT_MAX_LENGTH: 16_000,
  /** Longest schedule key. */
  KEY_MAX_LENGTH: 128,
  /** Longest cron expression. */
  CRON_MAX_LENGTH: 128,
  /** Characters of a failed occurrence's error message kept in its `itx/schedule-failed` fact. */
  ERROR_MESSAGE_MAX_LENGTH: 2_000,
  /** Cron slots counted when missed ones coalesce; past it the count says "at least". */
  COALESCE_COUNT_MAX: 1_000,
} as const;

/** The name of a scheduler limit, as it appears in an error's `details.limit`. */
export type SchedulerLimit = keyof typeof SCHEDULER_LIMITS;
