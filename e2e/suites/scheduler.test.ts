import { describe, expect } from "vitest";
import type { RpcStub } from "capnweb";
import { withItx } from "iterate/client";
import { expectCode } from "iterate/stream/test-support";
import type { Itx, ScheduleDefinition, ScheduleSummary, StreamEvent } from "iterate/types";
import { test } from "../harness/fixtures.ts";
import { until } from "../harness/poll.ts";
import { newProject } from "../harness/projects.ts";

const FIRED = "events.iterate.com/itx/schedule-fired";
const FAILED = "events.iterate.com/itx/schedule-failed";
const SET = "events.iterate.com/itx/schedule-set";
const CANCELLED = "events.iterate.com/itx/schedule-cancelled";
const beat = (type: string) => `async (itx) => { await itx.append({ type: "${type}" }) }`;

/** The payload of the scheduler's facts (`itx/schedule-*`), as far as this suite reads it. */
interface SchedulePayload {
  key: string;
  scheduledFor: number;
  definedAtOffset: number;
  coalesced?: number;
  error?: { code: string; message: string };
}
type ScheduleEvent = StreamEvent<string, SchedulePayload>;
const scheduleEvent = (event: StreamEvent) => event as ScheduleEvent;

/** Schedules and set facts other than the project template's own heartbeat (docs/projects.md). */
const mine = <T extends ScheduleSummary | ScheduleEvent>(list: T[]) =>
  list.filter((entry) => ("key" in entry ? entry.key : (entry.payload as Partial<SchedulePayload> | undefined)?.key) !== "heartbeat");

async function allEvents(itx: RpcStub<Itx>, types: string[]): Promise<ScheduleEvent[]> {
  const out: ScheduleEvent[] = [];
  for (let afterOffset = 0; ; ) {
    const page = await itx.getEvents({ types, afterOffset, limit: 500 });
    if (page.length === 0) return out;
    out.push(...page.map(scheduleEvent));
    afterOffset = page.at(-1)?.offset ?? afterOffset;
  }
}

describe("the scheduler", () => {
  test("{ every: 1 } fires, is changed, is cancelled, and list reflects each step", { timeout: 60_000 }, async ({ project: { itx } }) => {
    const first = await itx.scheduler.set({ key: "beat", every: 1, script: beat("test/one") });
    expect(first).toMatchObject({ key: "beat", every: 1, changed: true, runCount: 0 });
    await itx.waitForEvent({ type: FIRED, payload: { key: "beat", definedAtOffset: first.definedAtOffset }, timeoutMs: 10_000 });
    await itx.waitForEvent({ type: "test/one", timeoutMs: 5_000 });
    // Setting it unchanged keeps its clock and run count.
    const same = await itx.scheduler.set({ key: "beat", every: 1, script: beat("test/one") });
    expect(same).toMatchObject({ changed: false, definedAtOffset: first.definedAtOffset });
    expect(mine(await itx.scheduler.list())[0]?.runCount).toBeGreaterThanOrEqual(1);

    const changed = await itx.scheduler.set({ key: "beat", every: 2, script: beat("test/two") });
    expect(changed).toMatchObject({ changed: true, every: 2, runCount: 0 });
    expect(changed.definedAtOffset).toBeGreaterThan(first.definedAtOffset);
    await itx.waitForEvent({ type: FIRED, payload: { key: "beat", definedAtOffset: changed.definedAtOffset }, afterOffset: changed.definedAtOffset, timeoutMs: 10_000 });
    await itx.waitForEvent({ type: "test/two", afterOffset: changed.definedAtOffset, timeoutMs: 5_000 });
    const listed = mine(await itx.scheduler.list());
    expect(listed).toEqual([expect.objectContaining({ key: "beat", every: 2, definedAtOffset: changed.definedAtOffset, setBy: expect.objectContaining({ origin: "/" }) })]);
    expect(listed[0]?.runCount).toBeGreaterThanOrEqual(1);

    expect(await itx.scheduler.cancel("beat")).toBe(true);
    expect(mine(await itx.scheduler.list())).toEqual([]);
    expect(await itx.scheduler.cancel("beat")).toBe(false);
    const [cancelled = expect.unreachable("no schedule-cancelled fact")] = await allEvents(itx, [CANCELLED]);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    // Nothing fires for a slot after the cancellation.
    const late = (await allEvents(itx, [FIRED, FAILED])).filter((event) => event.payload.scheduledFor > Date.parse(cancelled.createdAt));
    expect(late).toEqual([]);
    expect(mine(await allEvents(itx, [SET]))).toHaveLength(2);
  });

  test("bad definitions are coded errors naming their limit, and write nothing", async ({ project: { itx } }) => {
    const tooFast = await expectCode(itx.scheduler.set({ key: "k", every: 0, script: beat("x") }), "INVALID_ARGUMENT");
    expect(tooFast.details).toMatchObject({ limit: "EVERY_MIN_SECONDS" });
    const long = await expectCode(itx.scheduler.set({ key: "k", every: 1, script: `async () => "${"x".repeat(20_000)}"` }), "INVALID_ARGUMENT");
    expect(long.details).toMatchObject({ limit: "SCRIPT_MAX_LENGTH" });
    await expectCode(itx.scheduler.set({ key: "k", cron: "not a cron", script: beat("x") }), "INVALID_ARGUMENT");
    // Deliberately malformed: both every and cron, which the contract's type refuses.
    await expectCode(itx.scheduler.set({ key: "k", every: 1, cron: "* * * * *", script: beat("x") } as unknown as ScheduleDefinition), "INVALID_ARGUMENT");
    await expectCode(itx.append({ type: SET, payload: { key: "forged", every: 1, script: beat("x") } }), "PERMISSION_DENIED");
    expect(mine(await itx.scheduler.list())).toEqual([]);
    expect(mine(await allEvents(itx, [SET]))).toEqual([]);
  });

  test("a schedule runs as whoever set it: a token confined to project A schedules in A and cannot reach B", { timeout: 30_000 }, async ({ os, admin, project: a, connect }) => {
    const { baseUrl } = os;
    const b = await newProject("sched-b");
    const { token } = await admin.issueToken({ principal: "robot", projectIds: [a.slug], ttlSeconds: 600 });
    using itx = withItx({ baseUrl, token, context: a.slug });
    const agent = await itx.extend({ path: "/agents/robot" });
    await agent.scheduler.set({ key: "as-me", every: 1, script: `async (itx) => { await itx.append({ type: "test/who", payload: await itx.whoami() }) }` });
    const who = await agent.waitForEvent({ type: "test/who", timeoutMs: 10_000 });
    expect(who.payload).toMatchObject({ principal: "robot", origin: "/agents/robot", path: "/agents/robot" });
    expect(who.source).toMatchObject({ principal: "robot", origin: "/agents/robot" });
    await agent.scheduler.cancel("as-me");
    const session = connect({ auth: { type: "bearer", token } });
    await expectCode(session.projects.get(b.slug).scheduler.set({ key: "into-b", every: 1, script: beat("x") }), "NOT_FOUND");
    const adminB = connect({ auth: os.admin, projectId: b.projectId });
    expect(mine(await adminB.scheduler.list())).toEqual([]);
  });

  test("a jail without a scheduler grant cannot schedule", async ({ project: { itx } }) => {
    const inside = await itx.extend({ path: "/jails/cell" });
    await itx.cd("/jails/cell").provideCapability({ path: [], capability: null });
    const answer = await inside.run(`async (itx) => { try { await itx.scheduler.set({ key: "k", every: 1, script: "async () => 1" }); return "reached"; } catch (error) { return error.message } }`);
    expect(answer).toContain("jail");
    expect(await itx.cd("/jails/cell").scheduler.list()).toEqual([]);
  });

  test("a context made a jail after it set a schedule: later occurrences run confined (the jail is looked up at each run)", { timeout: 30_000 }, async ({ project: { itx } }) => {
    const inside = await itx.extend({ path: "/jails/later" });
    const outside = itx.cd("/jails/later");
    const set = await inside.scheduler.set({ key: "out", every: 1, script: beat("demo/out") });
    await outside.waitForEvent({ type: "demo/out", afterOffset: set.definedAtOffset, timeoutMs: 10_000 });
    const jailed = await outside.provideCapability({ path: [], capability: null });
    const failed = scheduleEvent(await outside.waitForEvent({ type: FAILED, payload: { key: "out" }, afterOffset: jailed.providedAtOffset, timeoutMs: 10_000 }));
    expect(failed.payload.error?.code).toBe("SCRIPT_FAILED");
    expect(failed.payload.error?.message).toContain("jail");
    expect(await outside.scheduler.cancel("out")).toBe(true);
  });

  test("a cron schedule with a seconds field fires on its slots", { timeout: 30_000 }, async ({ project: { itx } }) => {
    const set = await itx.scheduler.set({ key: "cron", cron: "* * * * * *", script: beat("test/cron") });
    const fired = await until(() => allEvents(itx, [FIRED]), (events) => events.length >= 2, { timeoutMs: 15_000 });
    expect(fired.every((event) => event.payload.scheduledFor % 1000 === 0 && event.payload.definedAtOffset === set.definedAtOffset)).toBe(true);
    expect(await itx.scheduler.cancel("cron")).toBe(true);
  });

  test("a poison-pill script fails with TIMEOUT and hangs nothing: another schedule of the context keeps firing", { timeout: 90_000 }, async ({ project: { itx } }) => {
    const pill = await itx.scheduler.set({ key: "pill", every: 1, script: "async () => { await new Promise((resolve) => setTimeout(resolve, 600_000)) }" });
    const steady = await itx.scheduler.set({ key: "steady", every: 1, script: beat("test/steady") });
    await until(() => allEvents(itx, ["test/steady"]), (events) => events.length >= 3, { timeoutMs: 15_000 });
    const failed = scheduleEvent(await itx.waitForEvent({ type: FAILED, payload: { key: "pill" }, afterOffset: pill.definedAtOffset, timeoutMs: 60_000 }));
    expect(failed.payload.error, JSON.stringify(failed.payload.error)).toMatchObject({ code: "TIMEOUT" });
    const listed = await itx.scheduler.list();
    expect(listed.find((schedule) => schedule.key === "steady")?.definedAtOffset).toBe(steady.definedAtOffset);
    await itx.scheduler.cancel("pill");
    await itx.scheduler.cancel("steady");
    expect(await itx.whoami()).toMatchObject({ path: "/" });
  });
});

describe("the scheduler across a restart", () => {
  test("restarting the OS mid-schedule loses nothing and duplicates nothing; missed slots coalesce", { timeout: 480_000 }, async ({ restartable }) => {
    const { projectId } = await restartable.session().projects.create({ slug: "restart" }).whoami();
    const itx = restartable.project(projectId);
    const set = await itx.scheduler.set({ key: "beat", every: 1, script: beat("test/beat") });
    await until(() => allEvents(itx, [FIRED]), (events) => events.length >= 2);
    await restartable.kill();
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    const downAt = Date.now();
    await restartable.start();
    // Nobody touches the context: its alarm alone brings the schedule back.
    const probe = restartable.project(projectId);
    const settled = await until(
      () => allEvents(probe, [FIRED, FAILED]),
      (events) => events.filter((event) => event.payload.scheduledFor > downAt).length >= 3,
      { timeoutMs: 60_000 },
    );
    const slots = settled.map((event) => event.payload.scheduledFor);
    expect(new Set(slots).size).toBe(slots.length);
    expect(settled.every((event) => event.payload.definedAtOffset === set.definedAtOffset)).toBe(true);
    expect(slots).toEqual(slots.toSorted((x: number, y: number) => x - y));
    // The downtime is one occurrence standing for the slots it missed, not a backfill.
    const resumed = settled.find((event, index) => index > 0 && event.payload.scheduledFor - (settled[index - 1]?.payload.scheduledFor ?? 0) > 1000);
    expect(resumed?.payload.coalesced).toBeGreaterThanOrEqual(2);
    // Each fired occurrence ran its script once. The schedule keeps firing while this reads, so
    // only beats before the last settled occurrence it read are counted against it.
    const lastSettled = settled.at(-1)?.offset ?? expect.unreachable("no occurrence settled");
    const beats = (await allEvents(probe, ["test/beat"])).filter((event) => event.offset <= lastSettled);
    const fired = settled.filter((event) => event.type === FIRED).length;
    expect(beats.length).toBeGreaterThanOrEqual(fired);
    expect(beats.length).toBeLessThanOrEqual(settled.length);
    const [listed] = mine(await probe.scheduler.list());
    expect(listed).toMatchObject({ key: "beat", definedAtOffset: set.definedAtOffset });
    expect(listed?.runCount).toBeGreaterThanOrEqual(settled.length);
    await probe.scheduler.cancel("beat");
  });
});
