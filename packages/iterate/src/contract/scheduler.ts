// Scripts on a clock: `itx.scheduler`.

/**
 * A schedule as `itx.scheduler.set` takes it: a key (unique in the context), exactly one of
 * `every` (whole seconds, at least 1) or `cron` (five or six fields, UTC), and a script
 * `async (itx) => { ... }` whose itx is the setter's handle on the context.
 */
export type ScheduleDefinition = { key: string; script: string } & ({ every: number; cron?: never } | { cron: string; every?: never });

/** One schedule as `list()` and `set()` answer it. Times are epoch milliseconds. */
export interface ScheduleSummary {
  key: string;
  every?: number;
  cron?: string;
  script: string;
  /** Offset of the `itx/schedule-set` event that defines the schedule as it stands. */
  definedAtOffset: number;
  /** Who set it: each occurrence runs with this principal and origin. */
  setBy: { principal: string; origin?: string };
  /** Occurrences run under this definition (fired or failed), and how many of them failed. */
  runCount: number;
  failedCount: number;
  /** The slot the last occurrence ran for, or null before the first. */
  lastScheduledFor: number | null;
  /** The next slot, or null when a cron expression has no more. */
  nextAt: number | null;
}

/**
 * `itx.scheduler`: each occurrence appends `itx/schedule-fired` or `itx/schedule-failed` (with a
 * code) to the context's stream. Missed slots coalesce into one occurrence; schedules survive restarts.
 */
export interface Scheduler {
  /** Defines or redefines a schedule. An unchanged definition keeps its clock, run count and defining event (`changed: false`). */
  set(input: ScheduleDefinition): ScheduleSummary & { changed: boolean };
  /** Cancels the schedule under `key`; answers whether there was one. */
  cancel(key: string): boolean;
  list(): ScheduleSummary[];
}
