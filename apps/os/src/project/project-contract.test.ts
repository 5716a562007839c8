import { describe, expect, test } from "vitest";
import { ProcessorEngine } from "iterate/stream/processor";
import { connectEngine, fakeClock, memoryStorage, memoryStream, reduceProcessor, settle } from "iterate/stream/test-support";
import { ProjectProcessor, type ProjectEffects } from "./project-processor.ts";
import { FEED_QUEUE_MAX, needsUpdate, type ProjectState } from "./project-contract.ts";

const E = "events.iterate.com/";
const A = "a".repeat(40);
const B = "b".repeat(40);
const never = (() => Promise.reject(new Error("no effects in a fold"))) as never;
const effects: ProjectEffects = { ensureRootContext: never, seedConfigRepo: never, buildAndProbe: never, deliver: never, sleep: never };
const record = { projectId: "prj_x", slug: "x" };
const fold = (events: Array<{ type: string; payload?: unknown }>) => reduceProcessor(new ProjectProcessor(effects), events) as ProjectState;

const requested = { type: `${E}project/create-requested`, payload: record };
const started = (attempt: number) => ({ type: `${E}project/create-attempt-started`, payload: { requestOffset: 1, attempt } });
const seeded = (attempt: number) => ({ type: `${E}project/config-repo-seeded`, payload: { requestOffset: 1, attempt, commit: A } });
const created = { type: `${E}project/created`, payload: { requestOffset: 1, ...record } };
const updated = (commit: string) => ({ type: `${E}project/worker-updated`, payload: { commit, hash: "h" } });
const updatedFor = (commit: string, configOffset: number) => ({ type: `${E}project/worker-updated`, payload: { commit, hash: "h", configOffset } });
const copied = (commit: string, repo = "/repos/config", branch = "main") => ({ type: `${E}repo/commit-completed`, payload: { branch, commit, repo } });

describe("the Project processor's fold", () => {
  test.each<[string, Array<{ type: string; payload?: unknown }>, Partial<ProjectState["creation"] & object>]>([
    ["the request opens the run", [requested], { requestOffset: 1, attempt: 0, status: "requested" }],
    ["an attempt starts", [requested, started(1)], { attempt: 1, status: "running" }],
    ["a repeated attempt-started changes nothing", [requested, started(2), started(1)], { attempt: 2 }],
    ["a step of an older attempt changes nothing", [requested, started(1), started(2), seeded(1)], { attempt: 2, lastStep: "create-attempt-started" }],
    ["created settles the run", [requested, started(1), seeded(1), created], { status: "created" }],
    ["nothing moves a settled run", [requested, started(1), created, started(2)], { status: "created", attempt: 1 }],
  ])("%s", (_name, events, expected) => {
    expect(fold(events).creation).toMatchObject(expected);
  });

  test("the worker feed queues lifecycle events after its start until each is delivered", () => {
    const installed = { type: `${E}project/worker-feed-installed`, payload: { requestOffset: 1, attempt: 1, afterOffset: 1 } };
    const heartbeat = { type: `${E}project/heartbeat-triggered`, payload: { scheduleKey: "heartbeat" } };
    const delivered = (offset: number) => ({ type: `${E}project/worker-event-delivered`, payload: { offset, attempts: 1 } });
    // Offsets: 1 requested, 2 started, 3 installed, 4 created, 5 updated, 6 heartbeat.
    expect(fold([requested, started(1), installed, created, updated(A), heartbeat]).feedQueue).toEqual([4, 5, 6]);
    expect(fold([requested, started(1), installed, created, updated(A), heartbeat, delivered(5)]).feedQueue).toEqual([4, 6]);
    // Before the feed is installed nothing is queued.
    expect(fold([requested, heartbeat]).feedQueue).toEqual([]);
    // A flood keeps the newest FEED_QUEUE_MAX.
    const flood = fold([requested, started(1), installed, ...Array.from({ length: FEED_QUEUE_MAX + 5 }, () => heartbeat)]).feedQueue;
    expect(flood).toHaveLength(FEED_QUEUE_MAX);
    expect(flood.at(-1)).toBe(3 + FEED_QUEUE_MAX + 5);
  });

  test("a second request opens no second run", () => {
    expect(fold([requested, started(1), requested]).creation).toMatchObject({ requestOffset: 1, attempt: 1 });
  });

  test("the worker needs an update only for a new head of /repos/config main, once it failed no more", () => {
    const base = [requested, started(1), created, updated(A)];
    expect(needsUpdate(fold([...base, copied(A)]))).toBe(false);
    expect(needsUpdate(fold([...base, copied(B)]))).toBe(true);
    expect(needsUpdate(fold([...base, copied(B, "/repos/other")]))).toBe(false);
    expect(needsUpdate(fold([...base, copied(B, "/repos/config", "draft")]))).toBe(false);
    expect(needsUpdate(fold([...base, copied(B), { type: `${E}project/worker-update-failed`, payload: { commit: B, error: "x" } }]))).toBe(false);
    expect(needsUpdate(fold([requested, copied(B)]))).toBe(false);
  });

  test("an update covers the heads copied before it started, not one copied while it built", () => {
    const base = [requested, started(1), created, updated(A)];
    const C = "c".repeat(40);
    // Offsets: requested 1, started 2, created 3, updated 4, copied(B) 5, copied(C) 6. The update
    // started for B (offset 5) built B while C was copied: C is built next.
    expect(needsUpdate(fold([...base, copied(B), copied(C), updatedFor(B, 5)]))).toBe(true);
    // The update started for B found C already at the head: nothing more to build once C's copy lands.
    expect(needsUpdate(fold([...base, copied(B), updatedFor(C, 5)]))).toBe(false);
    expect(needsUpdate(fold([...base, copied(B), updatedFor(C, 5), copied(C)]))).toBe(false);
  });

  test("an update that finds the worker already built from the head writes nothing and does not build again for that head", async () => {
    const D = "d".repeat(40);
    const C = "c".repeat(40);
    let builds = 0;
    const building: ProjectEffects = {
      ...effects,
      buildAndProbe: async () => {
        builds += 1;
        return { commit: D, hash: "h" };
      },
    };
    const stream = memoryStream({ source: { principal: "admin", origin: "/" } });
    const engine = new ProcessorEngine({ stream, storage: memoryStorage(), clock: fakeClock(), processors: [new ProjectProcessor(building)] });
    connectEngine(stream, engine);
    await engine.start();
    // Offsets: 1 requested, 2 started, 3 created, 4 copied(B), 5 updated(D, for B), 6 copied(C): an
    // update started for B built the head, D, before C's copy landed; D's copy comes later.
    for (const event of [requested, started(1), created, copied(B), updatedFor(D, 4)]) await stream.append(event);
    await settle(engine);
    expect(builds).toBe(0);
    await stream.append(copied(C));
    await settle(engine);
    expect(builds).toBe(1);
    for (let i = 0; i < 3; i++) {
      await stream.append({ type: `${E}project/heartbeat-triggered`, payload: { scheduleKey: "heartbeat" } });
      await settle(engine);
    }
    expect(builds).toBe(1);
    expect(stream.events.filter((event) => event.type === `${E}project/worker-updated`)).toHaveLength(1);
  });
});
