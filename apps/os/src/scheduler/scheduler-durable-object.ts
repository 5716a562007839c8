import type { EventInput, EventSource, StreamEvent } from "iterate/types";
import { ItxError, errorCode, errorMessage } from "iterate/errors";
import { StreamProcessorDurableObject } from "iterate/sdk";
import type { Caller } from "../capability-host/capability-host-api.ts";
import { stampOf } from "../capability-host/capability-host-api.ts";
import { asCoded, type Coded } from "../api/coded-result.ts";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import { coordinateOfObject } from "../stream/coordinate.ts";
import { dueOccurrence, nextDueAt, type DueOccurrence } from "./schedule-clock.ts";
import { parseScheduleDefinition, parseScheduleKey, type ScheduleView } from "./schedule-input.ts";
import { runOccurrence } from "./schedule-run.ts";
import { actsAsSelfOrAncestor } from "../itx/context-lifecycle.ts";
import { HeldRunner } from "../worker-loader/runner-client.ts";
import type { ScriptOutcome } from "../worker-loader/run-script.ts";
import {
  SCHEDULE_CANCELLED,
  SCHEDULE_FAILED,
  SCHEDULE_FIRED,
  SCHEDULE_SET,
  SchedulerProcessor,
  canonicalDefinition,
  type Schedule,
  type SchedulerState,
} from "./scheduler-contract.ts";
import { LIMITS, limitDetails } from "../limits.ts";
import { rowBytes, tableBytes } from "../limits/checkpoint-table.ts";

/** What an occurrence settles as when the host that started it died before it finished: it is never run again. */
export const INTERRUPTED_OCCURRENCE_ERROR = {
  code: "RESOURCE_EXHAUSTED",
  message: "the host running this occurrence stopped before it finished; it is settled failed instead of run again",
} as const;

/** An occurrence started and not yet settled, kept in storage so that a restart can tell it never finished. */
interface InFlight extends DueOccurrence {
  key: string;
  definedAtOffset: number;
}

const IN_FLIGHT_PREFIX = "scheduler/in-flight:";

/**
 * One per context `<projectId>:<path>`: the context's schedules, folded from its stream by the
 * scheduler contract, and a Durable Object alarm at the next slot. An occurrence runs its script
 * as whoever set the schedule (like an enqueued run) and settles as `itx/schedule-fired` or
 * `itx/schedule-failed`, once per slot: its fact is keyed by the slot, and a run a restart
 * interrupted is settled failed rather than run twice.
 */
export class SchedulerDurableObject extends StreamProcessorDurableObject<Env> {
  readonly processor = new SchedulerProcessor();
  readonly #projectId: string;
  readonly #path: string;
  /** Occurrences running in this incarnation, by schedule key. */
  readonly #running = new Map<string, Promise<void>>();
  // After the project's budget refused an occurrence: nothing fires before this (SCHEDULER_REFUSED_PAUSE_MAX_MS).
  #pausedUntil = 0;
  #refusedInARow = 0;
  /** The occurrences' open session into the runner (local OS only): a Durable Object outlives its requests. */
  readonly #runner = new HeldRunner();
  /** Bytes of schedules set and not yet folded (see set). */
  #setting = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ({ projectId: this.#projectId, path: this.#path } = coordinateOfObject(ctx.id, "a scheduler"));
  }

  /** Defines (or redefines) a schedule. Setting an unchanged definition again changes nothing. */
  set(request: { definition: unknown; caller: Caller }): Promise<Coded<ScheduleView & { changed: boolean }>> {
    return asCoded(async () => {
      const definition = parseScheduleDefinition(request.definition);
      const setBy = { principal: request.caller.principal, origin: request.caller.origin };
      // Asked first: the checks below read the state and reserve its bytes with no wait between,
      // so sets arriving meanwhile are all counted.
      const fromAbove = await actsAsSelfOrAncestor(this.env, { projectId: this.#projectId, path: this.#path }, request.caller.origin);
      const state = await this.#state();
      const current = scheduleAt(state.schedules, definition.key);
      if (current && canonicalDefinition(current) === canonicalDefinition({ ...definition, setBy })) return { ...view(current), changed: false };
      // A new schedule, like a capability, is set from the context or above it: a sibling cannot
      // fill this context's schedules (nor its scheduler's checkpoint). One that exists is changed
      // by its setter too.
      if (!fromAbove && !(current && request.caller.origin === current.setBy.origin)) throw this.#notYours(request.caller, current, current ? "change" : "set");
      if (!current && Object.keys(state.schedules).length >= LIMITS.SCHEDULES_PER_CONTEXT_MAX) {
        throw new ItxError("INVALID_ARGUMENT", `a context holds at most ${LIMITS.SCHEDULES_PER_CONTEXT_MAX} schedules`, {
          details: limitDetails("SCHEDULES_PER_CONTEXT_MAX"),
        });
      }
      // The schedules are this object's checkpoint (at most 1 MiB): a set that would make them
      // larger than SCHEDULES_MAX_BYTES, counting sets still on their way, is refused.
      const adding = scheduleRowBytes(definition, setBy);
      const held = tableBytes(state.schedules, definition.key) + this.#setting;
      if (held + adding > LIMITS.SCHEDULES_MAX_BYTES) {
        throw new ItxError("INVALID_ARGUMENT", `this context's schedules would take ${held + adding} bytes, more than ${LIMITS.SCHEDULES_MAX_BYTES}`, {
          details: limitDetails("SCHEDULES_MAX_BYTES"),
        });
      }
      this.#setting += adding;
      try {
        await this.#append({ ...stampOf(request.caller), platform: "scheduler" }, { type: SCHEDULE_SET, payload: definition });
      } finally {
        this.#setting -= adding;
      }
      const schedule = scheduleAt((await this.#state()).schedules, definition.key);
      if (!schedule) throw new ItxError("INTERNAL", "the schedule was set but the fold does not hold it");
      await this.#arm();
      return { ...view(schedule), changed: true };
    });
  }

  /** Cancels a schedule; answers whether there was one. An occurrence already running finishes. */
  cancel(request: { key: unknown; caller: Caller }): Promise<Coded<boolean>> {
    return asCoded(async () => {
      const key = parseScheduleKey(request.key);
      const current = scheduleAt((await this.#state()).schedules, key);
      if (!current) return false;
      await this.#refuseStrangers(current, request.caller, "cancel");
      await this.#append({ ...stampOf(request.caller), platform: "scheduler" }, { type: SCHEDULE_CANCELLED, payload: { key, definedAtOffset: current.definedAtOffset } });
      return true;
    });
  }

  /** The context's schedules, by key. */
  async list(): Promise<ScheduleView[]> {
    const { schedules } = await this.#state();
    return Object.values(schedules)
      .map(view)
      .toSorted((a, b) => (a.key < b.key ? -1 : 1));
  }

  /** Fires what is due (coalescing missed slots), settles what a dead incarnation left running, and re-arms. */
  override async alarm(): Promise<void> {
    // No super.alarm(): this host starts no background claims for it to revive, and the fold holds
    // only the scheduler's own facts, which it ingests as it writes them (a cold wake reads them).
    await this.#fireDue();
    await this.#arm();
  }

  async #fireDue(): Promise<void> {
    const { schedules } = await this.#state();
    const now = Date.now();
    const left = await this.ctx.storage.list<InFlight>({ prefix: IN_FLIGHT_PREFIX });
    for (const [storageKey, inFlight] of left) {
      if (this.#running.has(inFlight.key)) continue;
      // Started by an incarnation that is gone: it may have run, so it is not run again.
      await this.#settle(inFlight, { type: SCHEDULE_FAILED, error: { ...INTERRUPTED_OCCURRENCE_ERROR } }, scheduleAt(schedules, inFlight.key));
      await this.ctx.storage.delete(storageKey);
    }
    for (const schedule of Object.values(schedules)) {
      if (this.#running.has(schedule.key)) continue; // a slot that passes meanwhile coalesces into the next
      // Paused by a refusal: the slots that pass coalesce into the next occurrence after it.
      if (Date.now() < this.#pausedUntil) break;
      const due = dueOccurrence(schedule, now);
      if (!due) continue;
      // Admitted one by one, before anything starts: the first refusal settles its slot and pauses
      // this scheduler, so a pass of many schedules costs the budget one refusal, not one each.
      const refused = await this.#budgetRefusal();
      if (refused?.status === "failed") {
        this.#pause();
        await this.#settle({ key: schedule.key, definedAtOffset: schedule.definedAtOffset, ...due }, { type: SCHEDULE_FAILED, error: refused.error }, schedule);
        break;
      }
      this.#refusedInARow = 0;
      // Not awaited: a long script must hold neither this alarm nor the context's other schedules.
      const firing = this.#fire(schedule, due)
        .catch((error: unknown) => console.error(`schedule ${schedule.key} of ${this.#path} could not settle`, error))
        .finally(() => this.#running.delete(schedule.key));
      this.#running.set(schedule.key, firing);
      // Re-armed after every occurrence, settled or not: an unsettled one is looked at again at once.
      this.ctx.waitUntil(firing.then(() => this.#arm()).catch((error: unknown) => console.error(`scheduler of ${this.#path} could not re-arm`, error)));
    }
  }

  async #fire(schedule: Schedule, due: DueOccurrence): Promise<void> {
    const inFlight: InFlight = { key: schedule.key, definedAtOffset: schedule.definedAtOffset, ...due };
    const storageKey = `${IN_FLIGHT_PREFIX}${schedule.key}`;
    await this.ctx.storage.put(storageKey, inFlight);
    const started = Date.now();
    const outcome = await runOccurrence(this.env, { projectId: this.#projectId, path: this.#path }, schedule, this.#runner);
    const durationMs = Date.now() - started;
    await this.#settle(inFlight, outcome.status === "succeeded" ? { type: SCHEDULE_FIRED, durationMs } : { type: SCHEDULE_FAILED, error: outcome.error }, schedule);
    await this.ctx.storage.delete(storageKey);
  }

  // 1 s after the first refusal in a row, twice as long after each next, at most SCHEDULER_REFUSED_PAUSE_MAX_MS.
  #pause(): void {
    this.#refusedInARow += 1;
    const wait = Math.min(LIMITS.SCHEDULER_REFUSED_PAUSE_MAX_MS, 1_000 * 2 ** Math.min(this.#refusedInARow - 1, 16));
    this.#pausedUntil = Date.now() + wait;
  }

  // The project's budget for scheduled runs (SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE): undefined when
  // this occurrence may run, else the failure it settles with (not knowing the budget, it does not run).
  async #budgetRefusal(): Promise<ScriptOutcome | undefined> {
    try {
      if (await this.env.PROJECT.getByName(`${this.#projectId}:/`).admitScheduledRun()) return undefined;
    } catch (error) {
      return { status: "failed", error: { code: "UNAVAILABLE", message: `the project's budget for scheduled runs could not be read: ${errorMessage(error)}` } };
    }
    return {
      status: "failed",
      error: {
        code: "RESOURCE_EXHAUSTED",
        message: `this project's schedules ran more than ${LIMITS.SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE} occurrences a minute (SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE); this one did not run`,
      },
    };
  }

  // One fact per slot: fired and failed share the slot's idempotency key, so a second attempt to
  // settle it (after a restart) is refused by the stream rather than written twice.
  async #settle(
    inFlight: InFlight,
    outcome: { type: typeof SCHEDULE_FIRED; durationMs: number } | { type: typeof SCHEDULE_FAILED; error: { code: string; message: string } },
    schedule: Schedule | undefined,
  ): Promise<void> {
    const occurrence = { key: inFlight.key, definedAtOffset: inFlight.definedAtOffset, scheduledFor: inFlight.scheduledFor, coalesced: inFlight.coalesced };
    const payload =
      outcome.type === SCHEDULE_FIRED
        ? { ...occurrence, durationMs: outcome.durationMs }
        : { ...occurrence, error: { code: outcome.error.code, message: outcome.error.message.slice(0, LIMITS.ERROR_MESSAGE_MAX_LENGTH) } };
    const principal = schedule?.setBy.principal ?? "platform";
    try {
      await this.#append(
        { principal, origin: this.#path, platform: "scheduler" },
        { type: outcome.type, payload, idempotencyKey: `itx/schedule-occurrence:${inFlight.definedAtOffset}:${inFlight.scheduledFor}` },
      );
    } catch (error) {
      if (errorCode(error) !== "IDEMPOTENCY_CONFLICT") throw error;
    }
  }

  // Changing or cancelling a schedule someone else set takes the setter's own origin, or code
  // acting as this context or one of its ancestors (as with capability rows); a sibling may not.
  async #refuseStrangers(schedule: Schedule, caller: Caller, what: string): Promise<void> {
    if (caller.origin === schedule.setBy.origin) return;
    if (await actsAsSelfOrAncestor(this.env, { projectId: this.#projectId, path: this.#path }, caller.origin)) return;
    throw this.#notYours(caller, schedule, what);
  }

  #notYours(caller: Caller, schedule: Schedule | undefined, what: string): ItxError {
    const message = schedule
      ? `code acting as ${caller.origin} cannot ${what} schedule ${schedule.key} of ${this.#path}: it was set by ${schedule.setBy.origin ?? "the platform"}`
      : `code acting as ${caller.origin} cannot set a schedule on ${this.#path}: only the context or one of its ancestors can`;
    return new ItxError("PERMISSION_DENIED", message, { details: { reason: "not-an-ancestor" } });
  }

  // The alarm goes off at the earliest slot of a schedule not running now (a running one re-arms
  // when it settles). Only ever moved earlier here: the processor host's own revival alarm, or a
  // slot that no longer exists, just wakes this object to look again.
  async #arm(): Promise<void> {
    const { schedules } = await this.#state();
    let next: number | null = null;
    for (const schedule of Object.values(schedules)) {
      if (this.#running.has(schedule.key)) continue;
      const due = nextDueAt(schedule);
      if (due !== null && (next === null || due < next)) next = due;
    }
    // An occurrence left in flight by no live run (a dead incarnation, a failed settle) is settled now.
    if (next !== null && next < this.#pausedUntil) next = this.#pausedUntil;
    const inFlight = await this.ctx.storage.list<InFlight>({ prefix: IN_FLIGHT_PREFIX });
    if ([...inFlight.values()].some((left) => !this.#running.has(left.key))) next = Date.now();
    if (next === null) return;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || next < current) await this.ctx.storage.setAlarm(next);
  }

  async #append(stamp: EventSource, ...events: EventInput[]): Promise<StreamEvent[]> {
    const stream = new StreamRpcTarget(streamStub(this.env.STREAM, `${this.#projectId}:${this.#path}`), stamp);
    const written = await stream.append(...events);
    await this.ingest(written);
    return written;
  }

  async #state(): Promise<SchedulerState> {
    if (!this.woken) await this.wakeStreamProcessor({ name: "scheduler", stream: this.openStream(), coordinate: `${this.#projectId}:${this.#path}` });
    return (await this.snapshot()).state as SchedulerState;
  }

  protected override openStream(): StreamRpcTarget {
    return new StreamRpcTarget(streamStub(this.env.STREAM, `${this.#projectId}:${this.#path}`), { platform: "scheduler" });
  }

  // An occurrence under way is held only here: the stream's session stays until it ends.
  protected override mayRelease(): boolean {
    return this.#running.size === 0;
  }
}

function view(schedule: Schedule): ScheduleView {
  return {
    key: schedule.key,
    ...(schedule.every === undefined ? {} : { every: schedule.every }),
    ...(schedule.cron === undefined ? {} : { cron: schedule.cron }),
    script: schedule.script,
    definedAtOffset: schedule.definedAtOffset,
    setBy: schedule.setBy,
    runCount: schedule.runCount,
    failedCount: schedule.failedCount,
    lastScheduledFor: schedule.lastScheduledFor,
    nextAt: nextDueAt(schedule),
  };
}

/** The most a schedule set from `definition` by `setBy` can take as the fold keeps it (its counters at their largest). */
function scheduleRowBytes(definition: { key: string }, setBy: object): number {
  const big = Number.MAX_SAFE_INTEGER;
  const reaction = { began: "x".repeat(LIMITS.STREAM_PATH_MAX_LENGTH + 24), round: big };
  return rowBytes(definition.key, { ...definition, definedAtOffset: big, definedAt: big, setBy, reaction, runCount: big, failedCount: big, lastScheduledFor: big });
}

// The schedules are a plain object keyed by untrusted keys: only its own rows count, never Object's members.
function scheduleAt(schedules: SchedulerState["schedules"], key: string): Schedule | undefined {
  return Object.hasOwn(schedules, key) ? schedules[key] : undefined;
}
