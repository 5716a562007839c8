import { z } from "zod";
import type { RunSettledPayload, RunStatus, StreamEvent } from "../../types.ts";

/**
 * Helpers for a processor whose work takes steps: a request fact opens a run, each attempt and
 * each step lands a keyed fact, and one `<x>-settled` fact ends it. See
 * docs/streams-and-processors.md and the greeter in src/stream/examples/.
 * @module
 */

/** Attempts a run may start before it is settled `unavailable`; each one is counted in a fact. */
export const MAX_RUN_ATTEMPTS = 3;

export type { RunSettledPayload, RunStatus };

/** The four ways a run ends. */
export const RUN_STATUSES = ["succeeded", "refused", "failed", "unavailable"] as const satisfies readonly RunStatus[];

export const runStatusSchema = z.enum(RUN_STATUSES);

/** The payload of a `<x>-settled` fact. */
export const runSettledPayloadSchema = z.strictObject({
  requestOffset: z.number().int().positive(),
  status: runStatusSchema,
  error: z.string().optional(),
});

/** The payload of an attempt-started fact; step facts extend it with their own fields. */
export const runAttemptPayloadSchema = z.strictObject({
  requestOffset: z.number().int().positive(),
  attempt: z.number().int().positive(),
});

/**
 * The idempotency key of a step's fact: `<slug>/<fact>:<requestOffset>:<attempt>`. A repeated
 * append of the same fact lands once.
 *
 * @example
 * stepKey("greeter", "greeting-composed", 4, 1); // "greeter/greeting-composed:4:1"
 */
export function stepKey(slug: string, fact: string, requestOffset: number, attempt: number): string {
  return `${slug}/${fact}:${requestOffset}:${attempt}`;
}

/**
 * The idempotency key of a run's one settled fact, keyed by the request alone so that a run can
 * settle only once, whichever attempt settles it.
 *
 * @example
 * settledKey("greeter", 4); // "greeter/settled:4"
 */
export function settledKey(slug: string, requestOffset: number): string {
  return `${slug}/settled:${requestOffset}`;
}

/** The last segment of a type: `events.example.com/greeter/greeting-composed` -> `greeting-composed`. */
export function factName(type: string): string {
  return type.slice(type.lastIndexOf("/") + 1);
}

/** Where a run stands. */
export const runStateSchema = z.object({
  /** The offset of the request: the run's id. */
  requestOffset: z.number().int().positive(),
  /** Attempts started so far; 0 until the first attempt-started fact. */
  attempt: z.number().int().nonnegative(),
  /** The fact name of the last fact folded into this run. */
  lastStep: z.string(),
  lastStepOffset: z.number().int().positive(),
  /** requested: no attempt yet; running: an attempt started; otherwise how it settled. */
  status: z.enum(["requested", "running", ...RUN_STATUSES]),
});

export type RunState = z.output<typeof runStateSchema>;

/** The fact types of one kind of run. */
export interface RunFacts {
  requested: string;
  attemptStarted: string;
  /** Facts landed by steps; each carries `requestOffset` and `attempt`. */
  steps: readonly string[];
  settled: string;
}

/** True until the run settles. */
export function isRunOpen(run: RunState | undefined): run is RunState {
  return run !== undefined && (run.status === "requested" || run.status === "running");
}

/** What a driver should do for a run it finds at head. */
export type RunAction =
  | { kind: "none" }
  | { kind: "attempt"; attempt: number }
  /** Every allowed attempt started and none settled the run: settle it `unavailable`. */
  | { kind: "exhausted" };

/**
 * Decides a driver's next move from the state alone: nothing for a settled run, the next attempt
 * while attempts remain, otherwise give up. A run found mid-attempt without a live driver lost that
 * attempt, so the next one starts at once.
 *
 * @example
 * nextRunAction({ requestOffset: 4, attempt: 1, lastStep: "greeting-attempt-started", lastStepOffset: 5, status: "running" });
 * // { kind: "attempt", attempt: 2 }
 */
export function nextRunAction(run: RunState | undefined, maxAttempts = MAX_RUN_ATTEMPTS): RunAction {
  if (!isRunOpen(run)) return { kind: "none" };
  if (run.attempt >= maxAttempts) return { kind: "exhausted" };
  return { kind: "attempt", attempt: run.attempt + 1 };
}

/**
 * A reducer for the facts of one kind of run. `runOf(event)` names the run an event belongs to;
 * `reduce(run, event)` folds it. Repeated and stale facts change nothing: an attempt-started no
 * newer than the current attempt, a step of another attempt, anything after the run settled.
 *
 * @example
 * const greeting = runState({ requested: REQUESTED, attemptStarted: ATTEMPT_STARTED, steps: [COMPOSED], settled: SETTLED });
 * const key = greeting.runOf(event); // the request offset, or undefined for other events
 * if (key !== undefined) runs[key] = greeting.reduce(runs[key], event);
 */
export function runState(facts: RunFacts) {
  const steps = new Set(facts.steps);
  const isRunFact = (type: string) =>
    type === facts.requested || type === facts.attemptStarted || type === facts.settled || steps.has(type);

  return {
    facts,
    runOf(event: Pick<StreamEvent, "type" | "offset" | "payload">): number | undefined {
      if (event.type === facts.requested) return event.offset;
      if (!isRunFact(event.type)) return undefined;
      return readInteger(event.payload, "requestOffset");
    },
    reduce(run: RunState | undefined, event: Pick<StreamEvent, "type" | "offset" | "payload">): RunState | undefined {
      const moved = { lastStep: factName(event.type), lastStepOffset: event.offset };
      if (event.type === facts.requested) {
        return run ?? { requestOffset: event.offset, attempt: 0, status: "requested", ...moved };
      }
      if (!isRunOpen(run) || readInteger(event.payload, "requestOffset") !== run.requestOffset) return run;
      const attempt = readInteger(event.payload, "attempt");
      if (event.type === facts.attemptStarted) {
        return attempt !== undefined && attempt > run.attempt ? { ...run, ...moved, attempt, status: "running" } : run;
      }
      if (steps.has(event.type)) return attempt === run.attempt ? { ...run, ...moved } : run;
      if (event.type === facts.settled) {
        const status = runStatusSchema.safeParse((event.payload as { status?: unknown } | null)?.status);
        return status.success ? { ...run, ...moved, status: status.data } : run;
      }
      return run;
    },
  };
}

function readInteger(payload: unknown, key: string): number | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const value = (payload as Record<string, unknown>)[key];
  return typeof value === "number" && Number.isInteger(value) ? value : undefined;
}
