import { Cron } from "croner";
import { ItxError } from "iterate/errors";
import { SCHEDULER_LIMITS } from "./scheduler-limits.ts";

/** When a schedule fires: every `every` seconds from when it was defined, or on a cron expression (UTC). */
export type Cadence = { every: number } | { cron: string };

/** What the clock needs of a schedule: its cadence, when it was defined, and the last slot it ran for. */
export interface ScheduleClock {
  every?: number | undefined;
  cron?: string | undefined;
  /** Epoch ms of the defining event: interval slots are counted from here. */
  definedAt: number;
  /** Epoch ms of the last slot an occurrence covered, or null before the first. */
  lastScheduledFor: number | null;
}

/** One occurrence to fire: the newest slot due, and how many older due slots it stands for. */
export interface DueOccurrence {
  scheduledFor: number;
  /** Missed slots folded into this one (no backfill). For cron, counted up to COALESCE_COUNT_MAX. */
  coalesced: number;
}

/** Validates `{ every }` or `{ cron }` from input: exactly one, within the named limits. */
export function parseCadence(input: { every?: unknown; cron?: unknown }): Cadence {
  const { every, cron } = input;
  if ((every === undefined) === (cron === undefined)) {
    throw new ItxError("INVALID_ARGUMENT", "a schedule takes exactly one of every (seconds) or cron (an expression, UTC)");
  }
  if (every !== undefined) {
    const { EVERY_MIN_SECONDS: min, EVERY_MAX_SECONDS: max } = SCHEDULER_LIMITS;
    if (typeof every !== "number" || !Number.isInteger(every)) throw new ItxError("INVALID_ARGUMENT", "every is a whole number of seconds");
    if (every < min) throw new ItxError("INVALID_ARGUMENT", `every is at least ${min} second(s)`, { details: { limit: "EVERY_MIN_SECONDS" } });
    if (every > max) throw new ItxError("INVALID_ARGUMENT", `every is at most ${max} seconds`, { details: { limit: "EVERY_MAX_SECONDS" } });
    return { every };
  }
  if (typeof cron !== "string") throw new ItxError("INVALID_ARGUMENT", "cron is a string such as \"*/5 * * * *\"");
  if (cron.length > SCHEDULER_LIMITS.CRON_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `a cron expression is at most ${SCHEDULER_LIMITS.CRON_MAX_LENGTH} characters`, { details: { limit: "CRON_MAX_LENGTH" } });
  }
  let parsed: Cron;
  try {
    parsed = cronOf(cron);
  } catch (error) {
    throw new ItxError("INVALID_ARGUMENT", `cron ${JSON.stringify(cron)} does not parse: ${(error as Error).message}`);
  }
  if (parsed.nextRun() === null) throw new ItxError("INVALID_ARGUMENT", `cron ${JSON.stringify(cron)} never fires`);
  return { cron };
}

/** The first slot strictly after `afterMs`, or null when a cron expression has no more. */
export function slotAfter(schedule: ScheduleClock, afterMs: number): number | null {
  if (schedule.every !== undefined) {
    const period = schedule.every * 1000;
    const slot = Math.max(1, Math.floor((afterMs - schedule.definedAt) / period) + 1);
    return schedule.definedAt + slot * period;
  }
  if (schedule.cron === undefined) return null;
  return cronOf(schedule.cron).nextRun(new Date(afterMs))?.getTime() ?? null;
}

/** When the schedule is next due: the first slot after the last one it ran for (or after its definition). */
export function nextDueAt(schedule: ScheduleClock): number | null {
  return slotAfter(schedule, schedule.lastScheduledFor ?? schedule.definedAt);
}

/**
 * The occurrence to fire at `now`, or undefined when none is due. Missed slots coalesce: one
 * occurrence for the newest slot at or before `now`, counting the older ones it stands for.
 */
export function dueOccurrence(schedule: ScheduleClock, now: number): DueOccurrence | undefined {
  const due = nextDueAt(schedule);
  if (due === null || due > now) return undefined;
  if (schedule.every !== undefined) {
    const period = schedule.every * 1000;
    const newest = schedule.definedAt + Math.floor((now - schedule.definedAt) / period) * period;
    return { scheduledFor: newest, coalesced: Math.round((newest - due) / period) };
  }
  const cron = cronOf(schedule.cron as string);
  const newest = cron.previousRuns(1, new Date(now + 1))[0]?.getTime() ?? due;
  let coalesced = 0;
  for (let slot: number | null = due; slot !== null && slot < newest && coalesced < SCHEDULER_LIMITS.COALESCE_COUNT_MAX; coalesced++) {
    slot = cron.nextRun(new Date(slot))?.getTime() ?? null;
  }
  return { scheduledFor: Math.max(newest, due), coalesced };
}

// Paused: croner only evaluates the expression here; nothing runs on its own timers.
function cronOf(expression: string): Cron {
  return new Cron(expression, { timezone: "UTC", paused: true });
}
