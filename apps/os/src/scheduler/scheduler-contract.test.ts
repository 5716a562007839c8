import { describe, expect, test } from "vitest";
import { reduceProcessor } from "iterate/stream/test-support";
import { SCHEDULE_CANCELLED, SCHEDULE_FAILED, SCHEDULE_FIRED, SCHEDULE_SET, SchedulerProcessor } from "./scheduler-contract.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const alice = { principal: "alice", origin: "/" };
const set = (payload: Record<string, unknown>, source: Record<string, unknown> = alice, createdAt = "2026-01-01T00:00:00.000Z") => ({
  type: SCHEDULE_SET,
  payload: { key: "beat", every: 1, script: "async () => 1", ...payload },
  source,
  createdAt,
});
const fired = (definedAtOffset: number, scheduledFor: number) => ({
  type: SCHEDULE_FIRED,
  payload: { key: "beat", definedAtOffset, scheduledFor, coalesced: 0, durationMs: 3 },
});
const failed = (definedAtOffset: number, scheduledFor: number) => ({
  type: SCHEDULE_FAILED,
  payload: { key: "beat", definedAtOffset, scheduledFor, coalesced: 0, error: { code: "SCRIPT_FAILED", message: "boom" } },
});

describe("the scheduler contract", () => {
  test("a set defines the schedule with its setter, its clock anchor and a reaction to its defining event", () => {
    const state = reduceProcessor(new SchedulerProcessor(), [set({})]);
    expect(state.schedules.beat).toEqual({
      key: "beat",
      every: 1,
      script: "async () => 1",
      definedAtOffset: 1,
      definedAt: T0,
      setBy: alice,
      reaction: { began: "/#1", round: 1 },
      runCount: 0,
      failedCount: 0,
      lastScheduledFor: null,
    });
  });

  test("setting an unchanged definition again keeps its clock, run count and defining event", () => {
    const state = reduceProcessor(new SchedulerProcessor(), [set({}), fired(1, T0 + 1000), set({}, alice, "2026-01-01T00:00:05.000Z")]);
    expect(state.schedules.beat).toMatchObject({ definedAtOffset: 1, definedAt: T0, runCount: 1, lastScheduledFor: T0 + 1000 });
  });

  test.each([
    ["the script", { script: "async () => 2" }, alice],
    ["the interval", { every: 2 }, alice],
    ["the cadence kind", { every: undefined, cron: "* * * * *" }, alice],
    ["the setter's origin", {}, { principal: "alice", origin: "/agents/a" }],
    ["the setter's principal", {}, { principal: "bob", origin: "/" }],
  ])("changing %s redefines it: a new defining event, clock and count", (_what, change, source) => {
    const state = reduceProcessor(new SchedulerProcessor(), [set({}), fired(1, T0 + 1000), set(change, source)]);
    expect(state.schedules.beat).toMatchObject({ definedAtOffset: 3, runCount: 0, lastScheduledFor: null, setBy: source });
  });

  test("fired and failed count runs and move the clock; stale slots and earlier definitions change nothing", () => {
    const state = reduceProcessor(new SchedulerProcessor(), [
      set({}),
      fired(1, T0 + 1000),
      failed(1, T0 + 3000),
      fired(1, T0 + 2000), // older than the last slot: a replayed or late fact
      fired(99, T0 + 9000), // another definition's fact
    ]);
    expect(state.schedules.beat).toMatchObject({ runCount: 2, failedCount: 1, lastScheduledFor: T0 + 3000 });
  });

  test("cancel removes only the definition it names", () => {
    const processor = new SchedulerProcessor();
    const kept = reduceProcessor(processor, [set({}), set({ every: 5 }), { type: SCHEDULE_CANCELLED, payload: { key: "beat", definedAtOffset: 1 } }]);
    expect(kept.schedules.beat?.definedAtOffset).toBe(2);
    const gone = reduceProcessor(processor, [set({}), { type: SCHEDULE_CANCELLED, payload: { key: "beat", definedAtOffset: 1 } }]);
    expect(gone.schedules).toEqual({});
  });

  test("a set with both or neither of every and cron is skipped by the fold", () => {
    const state = reduceProcessor(new SchedulerProcessor(), [set({ cron: "* * * * *" }), set({ key: "none", every: undefined })]);
    expect(state.schedules).toEqual({});
  });

  test("a script writing in reaction round 2 defines a schedule whose occurrences run at round 3", () => {
    const state = reduceProcessor(new SchedulerProcessor(), [set({}, { ...alice, reaction: { began: "/#7", round: 2 } })]);
    expect(state.schedules.beat?.reaction).toEqual({ began: "/#7", round: 3 });
  });

  test("replaying the same events reaches the same state", () => {
    const events = [set({}), fired(1, T0 + 1000), set({ key: "other", cron: "*/5 * * * * *", every: undefined }), failed(1, T0 + 2000)];
    expect(reduceProcessor(new SchedulerProcessor(), events)).toEqual(reduceProcessor(new SchedulerProcessor(), events));
  });
});
