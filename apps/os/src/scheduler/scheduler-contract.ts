import { z } from "zod";
import { StreamProcessor, defineProcessorContract, type ReduceArgs } from "iterate/stream/processor";
import { reactionTo } from "../stream/reaction.ts";
import { SCHEDULER_LIMITS } from "./scheduler-limits.ts";

export const SCHEDULE_SET = "events.iterate.com/itx/schedule-set";
export const SCHEDULE_CANCELLED = "events.iterate.com/itx/schedule-cancelled";
export const SCHEDULE_FIRED = "events.iterate.com/itx/schedule-fired";
export const SCHEDULE_FAILED = "events.iterate.com/itx/schedule-failed";

const key = z.string().min(1).max(SCHEDULER_LIMITS.KEY_MAX_LENGTH);

/** A schedule's definition as `itx.scheduler.set` takes it (validated there; the fold re-checks the shape). */
const setSchema = z
  .strictObject({
    key,
    every: z.number().int().min(SCHEDULER_LIMITS.EVERY_MIN_SECONDS).max(SCHEDULER_LIMITS.EVERY_MAX_SECONDS).optional(),
    cron: z.string().min(1).max(SCHEDULER_LIMITS.CRON_MAX_LENGTH).optional(),
    script: z.string().min(1).max(SCHEDULER_LIMITS.SCRIPT_MAX_LENGTH),
  })
  .refine((value) => (value.every === undefined) !== (value.cron === undefined), "exactly one of every or cron");

/** Names the occurrence a fired or failed fact settles: the schedule's defining event and its slot. */
const occurrence = {
  key,
  definedAtOffset: z.number().int().positive(),
  /** Epoch ms of the slot this occurrence ran for. */
  scheduledFor: z.number().int(),
  /** Older due slots this one stands for (missed intervals coalesce). */
  coalesced: z.number().int().nonnegative(),
};

const firedSchema = z.strictObject({ ...occurrence, durationMs: z.number().nonnegative() });
const failedSchema = z.strictObject({
  ...occurrence,
  error: z.strictObject({ code: z.string().max(64), message: z.string().max(SCHEDULER_LIMITS.ERROR_MESSAGE_MAX_LENGTH) }),
});

const scheduleSchema = z.strictObject({
  key,
  every: z.number().int().optional(),
  cron: z.string().optional(),
  script: z.string(),
  /** The `itx/schedule-set` event that defines the schedule as it stands. */
  definedAtOffset: z.number().int(),
  /** Epoch ms of that event: interval slots count from here. */
  definedAt: z.number(),
  /** Whoever set it: each occurrence runs with this principal and origin, never more. */
  setBy: z.strictObject({ principal: z.string(), origin: z.string().optional() }),
  /** Occurrences react to the defining event: their writes carry its chain one round on. */
  reaction: z.strictObject({ began: z.string(), round: z.number().int() }),
  /** Occurrences run (fired or failed) under this definition. */
  runCount: z.number().int(),
  failedCount: z.number().int(),
  lastScheduledFor: z.number().nullable(),
});
export type Schedule = z.infer<typeof scheduleSchema>;

/**
 * The scheduler of one context: its schedules, folded from the context's own stream. The clock
 * is in the facts (the defining event's time and the last slot run), so a replay on another host
 * fires at the same slots; the checkpoint is a cache of this fold.
 */
export const SchedulerContract = defineProcessorContract({
  slug: "scheduler",
  version: "1.0.0",
  description: "Folds a context's schedules from itx/schedule-* events.",
  stateSchema: z.object({ schedules: z.record(z.string(), scheduleSchema).default({}) }),
  events: {
    [SCHEDULE_SET]: setSchema,
    [SCHEDULE_CANCELLED]: z.strictObject({ key, definedAtOffset: z.number().int().positive() }),
    [SCHEDULE_FIRED]: firedSchema,
    [SCHEDULE_FAILED]: failedSchema,
  },
  consumes: [SCHEDULE_SET, SCHEDULE_CANCELLED, SCHEDULE_FIRED, SCHEDULE_FAILED],
  emits: [SCHEDULE_FIRED, SCHEDULE_FAILED],
});

export type SchedulerState = ReturnType<typeof SchedulerContract.initialState>;

/** The part of a schedule that decides whether setting it again changes it. */
export function canonicalDefinition(schedule: { every?: number | undefined; cron?: string | undefined; script: string; setBy: { principal: string; origin?: string | undefined } }): string {
  return JSON.stringify([schedule.every ?? null, schedule.cron ?? null, schedule.script, schedule.setBy.principal, schedule.setBy.origin ?? null]);
}

/** The pure fold of a context's schedules. Side effects (alarms, runs) live in the Durable Object. */
export class SchedulerProcessor extends StreamProcessor<typeof SchedulerContract> {
  readonly contract = SchedulerContract;

  override reduce({ event, state }: ReduceArgs<typeof SchedulerContract>): SchedulerState {
    switch (event.type) {
      case SCHEDULE_SET: {
        const { key: name, every, cron, script } = event.payload;
        const setBy = { principal: event.source.principal ?? "platform", ...(event.source.origin === undefined ? {} : { origin: event.source.origin }) };
        const current = state.schedules[name];
        // An unchanged definition keeps its clock, run count and defining event.
        if (current && canonicalDefinition(current) === canonicalDefinition({ every, cron, script, setBy })) return state;
        const schedule: Schedule = {
          key: name,
          ...(every === undefined ? {} : { every }),
          ...(cron === undefined ? {} : { cron }),
          script,
          definedAtOffset: event.offset,
          definedAt: Date.parse(event.createdAt),
          setBy,
          reaction: reactionTo(event),
          runCount: 0,
          failedCount: 0,
          lastScheduledFor: null,
        };
        return { schedules: { ...state.schedules, [name]: schedule } };
      }
      case SCHEDULE_CANCELLED: {
        const current = state.schedules[event.payload.key];
        if (!current || current.definedAtOffset !== event.payload.definedAtOffset) return state;
        const { [event.payload.key]: _cancelled, ...schedules } = state.schedules;
        return { schedules };
      }
      case SCHEDULE_FIRED:
      case SCHEDULE_FAILED: {
        const { key: name, definedAtOffset, scheduledFor } = event.payload;
        const current = state.schedules[name];
        // A fact about an earlier definition, or a slot already covered, changes nothing.
        if (!current || current.definedAtOffset !== definedAtOffset) return state;
        if (current.lastScheduledFor !== null && scheduledFor <= current.lastScheduledFor) return state;
        const failed = event.type === SCHEDULE_FAILED ? 1 : 0;
        const schedule = { ...current, lastScheduledFor: scheduledFor, runCount: current.runCount + 1, failedCount: current.failedCount + failed };
        return { schedules: { ...state.schedules, [name]: schedule } };
      }
      default:
        return state;
    }
  }
}
