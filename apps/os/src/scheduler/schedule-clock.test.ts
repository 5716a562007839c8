import { describe, expect, test } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import { dueOccurrence, nextDueAt, parseCadence } from "./schedule-clock.ts";
import { parseScheduleDefinition } from "./schedule-input.ts";
import { SCHEDULER_LIMITS } from "./scheduler-limits.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const every = (seconds: number, lastScheduledFor: number | null = null) => ({ every: seconds, definedAt: T0, lastScheduledFor });
const cron = (expression: string, lastScheduledFor: number | null = null) => ({ cron: expression, definedAt: T0, lastScheduledFor });

describe("the schedule clock", () => {
  test.each([
    ["an interval before its first slot", every(1), T0 + 999, undefined],
    ["an interval at its first slot", every(1), T0 + 1000, { scheduledFor: T0 + 1000, coalesced: 0 }],
    ["an interval a little late", every(1), T0 + 1200, { scheduledFor: T0 + 1000, coalesced: 0 }],
    ["an interval after four missed slots: one occurrence for the newest", every(1, T0 + 1000), T0 + 6500, { scheduledFor: T0 + 6000, coalesced: 4 }],
    ["an interval whose slot already ran", every(10, T0 + 10_000), T0 + 15_000, undefined],
    ["a cron on every fifth second", cron("*/5 * * * * *"), T0 + 5000, { scheduledFor: T0 + 5000, coalesced: 0 }],
    ["a cron after three missed slots", cron("*/5 * * * * *", T0 + 5000), T0 + 26_000, { scheduledFor: T0 + 25_000, coalesced: 3 }],
    ["a daily cron before its hour", cron("0 9 * * *"), T0 + 3_600_000, undefined],
  ])("%s", (_name, schedule, now, expected) => {
    expect(dueOccurrence(schedule, now)).toEqual(expected);
  });

  test("the next slot follows the last one run, on the anchor's grid", () => {
    expect(nextDueAt(every(1))).toBe(T0 + 1000);
    expect(nextDueAt(every(3, T0 + 9000))).toBe(T0 + 12_000);
    expect(nextDueAt(cron("0 9 * * *"))).toBe(T0 + 9 * 3_600_000);
  });

  test.each([
    [{ every: 0 }, "EVERY_MIN_SECONDS"],
    [{ every: SCHEDULER_LIMITS.EVERY_MAX_SECONDS + 1 }, "EVERY_MAX_SECONDS"],
    [{ cron: `${"* ".repeat(70)}` }, "CRON_MAX_LENGTH"],
  ])("a cadence past its limit is INVALID_ARGUMENT naming it: %j", async (input, limit) => {
    const error = await expectCode(Promise.resolve().then(() => parseCadence(input)), "INVALID_ARGUMENT");
    expect(error.details).toMatchObject({ limit });
  });

  test.each([{}, { every: 1, cron: "* * * * *" }, { every: 1.5 }, { every: "1" }, { cron: "bogus" }, { cron: "0 0 31 2 *" }])(
    "a malformed cadence is INVALID_ARGUMENT: %j",
    async (input) => {
      await expectCode(Promise.resolve().then(() => parseCadence(input)), "INVALID_ARGUMENT");
    },
  );

  test("a schedule script past SCRIPT_MAX_LENGTH and an unknown field are refused", async () => {
    const long = `async () => ${"1".repeat(SCHEDULER_LIMITS.SCRIPT_MAX_LENGTH)}`;
    const error = await expectCode(Promise.resolve().then(() => parseScheduleDefinition({ key: "k", every: 1, script: long })), "INVALID_ARGUMENT");
    expect(error.details).toMatchObject({ limit: "SCRIPT_MAX_LENGTH" });
    await expectCode(Promise.resolve().then(() => parseScheduleDefinition({ key: "k", every: 1, script: "async () => 1", at: 5 })), "INVALID_ARGUMENT");
    const key = await expectCode(Promise.resolve().then(() => parseScheduleDefinition({ key: "k".repeat(200), every: 1, script: "async () => 1" })), "INVALID_ARGUMENT");
    expect(key.details).toMatchObject({ limit: "KEY_MAX_LENGTH" });
  });
});
