import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import type { StreamEvent } from "iterate/types";
import { expectCode } from "iterate/stream/test-support";
import { unwrapCoded } from "../api/coded-result.ts";
import { ensureContext } from "../itx/context-lifecycle.ts";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import { SCHEDULE_FAILED, SCHEDULE_FIRED, SCHEDULE_SET } from "./scheduler-contract.ts";
import { INTERRUPTED_OCCURRENCE_ERROR } from "./scheduler-durable-object.ts";
import { LIMITS } from "../limits.ts";

let counter = 0;
const root = { principal: "tester", origin: "/" };
const BEAT = `async (itx) => { await itx.append({ type: "test/beat" }) }`;
// 13,000 control characters: 78 KB of JSON each, so a dozen pass SCHEDULES_MAX_BYTES well before SCHEDULES_PER_CONTEXT_MAX.
const heavy = (key: string) => ({ definition: { key, every: 3600, script: `async () => "${"\u0001".repeat(13_000)}"` }, caller: root });

async function freshContext(): Promise<{ projectId: string; scheduler: DurableObjectStub<import("./scheduler-durable-object.ts").SchedulerDurableObject> }> {
  counter += 1;
  const projectId = `prj_sched${Date.now()}${counter}`;
  await ensureContext(env, { projectId, path: "/", name: "test", parent: null, ancestors: [], caller: root });
  return { projectId, scheduler: env.SCHEDULER.getByName(`${projectId}:/`) };
}

function events(projectId: string, types: string[]): Promise<StreamEvent[]> {
  return Promise.resolve(new StreamRpcTarget(streamStub(env.STREAM, `${projectId}:/`), { platform: "stream" }).getEvents({ types, limit: 500 }));
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("the scheduler Durable Object", () => {
  test("{ every: 1 } fires on its alarm, as its setter, once per slot; list counts the runs", async () => {
    const { projectId, scheduler } = await freshContext();
    const set = unwrapCoded(await scheduler.set({ definition: { key: "beat", every: 1, script: BEAT }, caller: root }));
    expect(set).toMatchObject({ key: "beat", every: 1, changed: true, runCount: 0 });
    const fired = await until(() => events(projectId, [SCHEDULE_FIRED]), (list) => list.length >= 2);
    expect(fired.length).toBeGreaterThanOrEqual(2);
    const slots = fired.map((event) => (event.payload as { scheduledFor: number }).scheduledFor);
    expect(new Set(slots).size).toBe(slots.length);
    expect((slots[1] ?? 0) - (slots[0] ?? 0)).toBeGreaterThanOrEqual(1000);
    const beats = await events(projectId, ["test/beat"]);
    expect(beats.length).toBeGreaterThanOrEqual(2);
    // The occurrence acts as whoever set the schedule, in reaction to its defining event.
    expect(beats[0]?.source).toMatchObject({ principal: "tester", origin: "/", reaction: { began: `/#${set.definedAtOffset}`, round: 1 } });
    const [listed] = await scheduler.list();
    expect(listed?.runCount).toBeGreaterThanOrEqual(2);
    expect(unwrapCoded(await scheduler.cancel({ key: "beat", caller: root }))).toBe(true);
  });

  test("setting an unchanged definition keeps its defining event; a change makes a new one", async () => {
    const { projectId, scheduler } = await freshContext();
    const first = unwrapCoded(await scheduler.set({ definition: { key: "k", every: 60, script: BEAT }, caller: root }));
    const again = unwrapCoded(await scheduler.set({ definition: { key: "k", every: 60, script: BEAT }, caller: root }));
    expect(again).toMatchObject({ changed: false, definedAtOffset: first.definedAtOffset, nextAt: first.nextAt });
    const changed = unwrapCoded(await scheduler.set({ definition: { key: "k", every: 120, script: BEAT }, caller: root }));
    expect(changed.changed).toBe(true);
    expect(changed.definedAtOffset).toBeGreaterThan(first.definedAtOffset);
    expect(await events(projectId, [SCHEDULE_SET])).toHaveLength(2);
  });

  test("a failing script settles schedule-failed with its code, and the schedule keeps firing", async () => {
    const { projectId, scheduler } = await freshContext();
    const script = `async (itx) => { await itx.append({ type: "test/tried" }); throw new Error("nope") }`;
    unwrapCoded(await scheduler.set({ definition: { key: "bad", every: 1, script }, caller: root }));
    const failed = await until(() => events(projectId, [SCHEDULE_FAILED]), (list) => list.length >= 2);
    expect(failed[0]?.payload).toMatchObject({ key: "bad", error: { code: "SCRIPT_FAILED" } });
    expect(failed.length).toBeGreaterThanOrEqual(2);
    const [listed] = await scheduler.list();
    expect(listed).toMatchObject({ key: "bad" });
    expect(listed?.failedCount).toBeGreaterThanOrEqual(2);
    unwrapCoded(await scheduler.cancel({ key: "bad", caller: root }));
  });

  test("a schedule survives its host's restart: the stored alarm brings it back", async () => {
    const { projectId, scheduler } = await freshContext();
    unwrapCoded(await scheduler.set({ definition: { key: "r", every: 1, script: BEAT }, caller: root }));
    await runInDurableObject(scheduler, (_instance, state) => state.abort("test: restart")).catch(() => undefined);
    const restartedAt = Date.now();
    const fired = await until(
      () => events(projectId, [SCHEDULE_FIRED]),
      (list) => list.filter((event) => Date.parse(event.createdAt) > restartedAt).length >= 2,
    );
    expect(fired.filter((event) => Date.parse(event.createdAt) > restartedAt).length).toBeGreaterThanOrEqual(2);
    unwrapCoded(await env.SCHEDULER.getByName(`${projectId}:/`).cancel({ key: "r", caller: root }));
  });

  test("missed slots coalesce into one occurrence (no backfill)", async () => {
    const { projectId, scheduler } = await freshContext();
    unwrapCoded(await scheduler.set({ definition: { key: "c", every: 1, script: BEAT }, caller: root }));
    // The alarm is lost for a while, as if the host were down for three slots.
    await runInDurableObject(scheduler, (_instance, state) => state.storage.deleteAlarm());
    await new Promise((resolve) => setTimeout(resolve, 3_300));
    await runInDurableObject(scheduler, (_instance, state) => state.storage.setAlarm(Date.now()));
    await runDurableObjectAlarm(scheduler);
    const fired = await until(() => events(projectId, [SCHEDULE_FIRED]), (list) => list.length >= 1);
    expect(fired[0]?.payload).toMatchObject({ key: "c", coalesced: 2 });
    expect(await events(projectId, ["test/beat"])).toHaveLength(1);
    unwrapCoded(await scheduler.cancel({ key: "c", caller: root }));
  });

  test("an occurrence its host died running is settled failed once after the restart and not run again", async () => {
    const { projectId, scheduler } = await freshContext();
    const set = unwrapCoded(await scheduler.set({ definition: { key: "d", every: 3600, script: BEAT }, caller: root }));
    const slot = set.nextAt as number;
    // What a host that died mid-run leaves behind: its in-flight record, and an alarm to look again.
    await runInDurableObject(scheduler, async (_instance, state) => {
      await state.storage.put("scheduler/in-flight:d", { key: "d", definedAtOffset: set.definedAtOffset, scheduledFor: slot, coalesced: 0 });
      await state.storage.setAlarm(Date.now());
    });
    await runInDurableObject(scheduler, (_instance, state) => state.abort("test: the host dies mid-run")).catch(() => undefined);
    await runDurableObjectAlarm(env.SCHEDULER.getByName(`${projectId}:/`));
    const failed = await until(() => events(projectId, [SCHEDULE_FAILED]), (list) => list.length >= 1);
    expect(failed).toHaveLength(1);
    expect(failed[0]?.payload).toMatchObject({ key: "d", scheduledFor: slot, error: { code: INTERRUPTED_OCCURRENCE_ERROR.code } });
    expect(await events(projectId, ["test/beat"])).toHaveLength(0);
    const [listed] = await env.SCHEDULER.getByName(`${projectId}:/`).list();
    expect(listed).toMatchObject({ runCount: 1, failedCount: 1, lastScheduledFor: slot, nextAt: slot + 3_600_000 });
  });

  test("a schedule's state is a fold: a deleted checkpoint is rebuilt by replay", async () => {
    const { projectId, scheduler } = await freshContext();
    unwrapCoded(await scheduler.set({ definition: { key: "a", cron: "0 9 * * 1", script: BEAT }, caller: root }));
    unwrapCoded(await scheduler.set({ definition: { key: "b", every: 600, script: BEAT }, caller: root }));
    const before = await scheduler.list();
    await runInDurableObject(scheduler, async (_instance, state) => {
      await state.storage.deleteAll();
      state.abort("test: forget the checkpoint");
    }).catch(() => undefined);
    expect(await env.SCHEDULER.getByName(`${projectId}:/`).list()).toEqual(before);
  });

  test("a sibling cannot set, change or cancel a context's schedules; the context and an ancestor can", async () => {
    const { projectId } = await freshContext();
    await ensureContext(env, { projectId, path: "/work", name: "work", parent: "/", ancestors: ["/"], caller: root });
    const scheduler = env.SCHEDULER.getByName(`${projectId}:/work`);
    const work = { principal: "tester", origin: "/work" };
    const sibling = { principal: "tester", origin: "/agents/b" };
    unwrapCoded(await scheduler.set({ definition: { key: "x", every: 600, script: BEAT }, caller: work }));
    await expectCode(scheduler.cancel({ key: "x", caller: sibling }).then(unwrapCoded), "PERMISSION_DENIED");
    await expectCode(scheduler.set({ definition: { key: "x", every: 60, script: BEAT }, caller: sibling }).then(unwrapCoded), "PERMISSION_DENIED");
    // Nor a new one: a sibling could otherwise fill SCHEDULES_PER_CONTEXT_MAX and the scheduler's checkpoint.
    const denied = await expectCode(scheduler.set({ definition: { key: "filler", every: 600, script: BEAT }, caller: sibling }).then(unwrapCoded), "PERMISSION_DENIED");
    expect(denied.details).toMatchObject({ reason: "not-an-ancestor" });
    expect(unwrapCoded(await scheduler.set({ definition: { key: "x", every: 60, script: BEAT }, caller: work })).changed).toBe(true);
    expect(unwrapCoded(await scheduler.set({ definition: { key: "from-above", every: 60, script: BEAT }, caller: root })).changed).toBe(true);
    expect(unwrapCoded(await scheduler.cancel({ key: "x", caller: root }))).toBe(true);
    expect((await scheduler.list()).map((schedule) => schedule.key)).toEqual(["from-above"]);
  });

  test("SCHEDULES_MAX_BYTES bounds the schedules by their bytes, sets sent at once included, so the checkpoint is always written", async () => {
    const { projectId, scheduler } = await freshContext();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => scheduler.set(heavy(`k${i}`))));
    const refused = answers.filter((answer) => !answer.ok);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) expect(answer).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENT", details: { limit: "SCHEDULES_MAX_BYTES" } } });
    const held = await scheduler.list();
    expect(held).toHaveLength(12 - refused.length);
    await runInDurableObject(scheduler, (_instance, state) => state.abort("test: a new incarnation")).catch(() => undefined);
    expect(await env.SCHEDULER.getByName(`${projectId}:/`).list()).toEqual(held);
  });

  test("SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE: past the project's budget an occurrence settles RESOURCE_EXHAUSTED without running", async () => {
    const saved = LIMITS.SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE;
    // The project's object runs in this isolate and reads the limit at each admission: 2 a minute, one at a time.
    (LIMITS as Record<string, number>).SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE = 2;
    try {
      const { projectId } = await freshContext();
      await ensureContext(env, { projectId, path: "/other", name: "other", parent: "/", ancestors: ["/"], caller: root });
      // Two contexts' schedules share the one budget.
      for (const path of ["/", "/other"]) {
        const scheduler = env.SCHEDULER.getByName(`${projectId}:${path}`);
        unwrapCoded(await scheduler.set({ definition: { key: "beat", every: 1, script: BEAT }, caller: root }));
      }
      const failed = await until(
        async () => [...(await events(projectId, [SCHEDULE_FAILED])), ...(await new StreamRpcTarget(streamStub(env.STREAM, `${projectId}:/other`), { platform: "stream" }).getEvents({ types: [SCHEDULE_FAILED], limit: 500 }))],
        (list) => list.length >= 3,
      );
      expect(failed.length).toBeGreaterThanOrEqual(3);
      for (const event of failed) expect((event.payload as { error: { code: string; message: string } }).error).toMatchObject({ code: "RESOURCE_EXHAUSTED", message: expect.stringContaining("SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE") });
      // One occurrence ran (the burst) in all that time, across both contexts.
      const beats = [...(await events(projectId, ["test/beat"])), ...(await new StreamRpcTarget(streamStub(env.STREAM, `${projectId}:/other`), { platform: "stream" }).getEvents({ types: ["test/beat"], limit: 500 }))];
      expect(beats).toHaveLength(1);
      for (const path of ["/", "/other"]) unwrapCoded(await env.SCHEDULER.getByName(`${projectId}:${path}`).cancel({ key: "beat", caller: root }));
    } finally {
      (LIMITS as Record<string, number>).SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE = saved;
    }
  });

  test("SCHEDULER_REFUSED_PAUSE_MAX_MS: a refusal pauses the context's scheduler (1 s, then twice as long), so many schedules past the budget cost a refusal per pause, not one per slot", async () => {
    const saved = LIMITS.SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE;
    (LIMITS as Record<string, number>).SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE = 1;
    try {
      const { projectId, scheduler } = await freshContext();
      for (let index = 0; index < 20; index++) unwrapCoded(await scheduler.set({ definition: { key: `beat-${index}`, every: 1, script: BEAT }, caller: root }));
      await new Promise((resolve) => setTimeout(resolve, 4_500));
      const failed = await events(projectId, [SCHEDULE_FAILED]);
      const beats = await events(projectId, ["test/beat"]);
      for (let index = 0; index < 20; index++) unwrapCoded(await scheduler.cancel({ key: `beat-${index}`, caller: root }));
      // One run (the burst), then refusals at about 0, 1 and 3 s of pause: before, 20 a second.
      expect(beats).toHaveLength(1);
      expect(failed.length).toBeGreaterThanOrEqual(1);
      expect(failed.length).toBeLessThanOrEqual(5);
      for (const event of failed) expect((event.payload as { error: { code: string } }).error.code).toBe("RESOURCE_EXHAUSTED");
    } finally {
      (LIMITS as Record<string, number>).SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE = saved;
    }
  });

  test("a key that names a member of Object.prototype is refused INVALID_ARGUMENT by set and cancel, not read as a schedule", async () => {
    const { scheduler } = await freshContext();
    for (const key of ["__proto__", "constructor", "toString", "valueOf", "hasOwnProperty"]) {
      const refused = await expectCode(scheduler.set({ definition: { key, every: 3600, script: BEAT }, caller: root }).then(unwrapCoded), "INVALID_ARGUMENT", key);
      expect(refused.message).toContain("reserved");
      await expectCode(scheduler.cancel({ key, caller: root }).then(unwrapCoded), "INVALID_ARGUMENT", key);
    }
    // A key that only contains such a name is an ordinary key.
    expect(unwrapCoded(await scheduler.set({ definition: { key: "constructor/daily", every: 3600, script: BEAT }, caller: root })).changed).toBe(true);
    expect((await scheduler.list()).map((schedule) => schedule.key)).toEqual(["constructor/daily"]);
  });

  test("a context holds at most SCHEDULES_PER_CONTEXT_MAX schedules", async () => {
    const { scheduler } = await freshContext();
    for (let index = 0; index < LIMITS.SCHEDULES_PER_CONTEXT_MAX; index++) {
      unwrapCoded(await scheduler.set({ definition: { key: `k${index}`, every: 3600, script: BEAT }, caller: root }));
    }
    const error = await expectCode(scheduler.set({ definition: { key: "one-more", every: 3600, script: BEAT }, caller: root }).then(unwrapCoded), "INVALID_ARGUMENT");
    expect(error.details).toMatchObject({ limit: "SCHEDULES_PER_CONTEXT_MAX" });
    // Redefining one that exists is still allowed.
    expect(unwrapCoded(await scheduler.set({ definition: { key: "k0", every: 60, script: BEAT }, caller: root })).changed).toBe(true);
  });
});
