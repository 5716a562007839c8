import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import type { StreamDurableObject } from "./stream-durable-object.ts";
import { describe, expect, test } from "vitest";
import { streamStub } from "./stream-rpc-target.ts";
import { errorCode } from "iterate/errors";
import { SUBSCRIPTION_CONFIGURED } from "./stream-core.ts";
import { LIMITS } from "../limits.ts";

let counter = 0;
function names() {
  counter += 1;
  const id = `${Date.now()}-${counter}`;
  // A host folds the stream it is named after (a wake from any other is refused).
  const stream = `prj_hosted${id}:/tallies`;
  return { stream, host: stream };
}
const stamp = { principal: "tester" };
/** Subscription rows are the platform's: tests write them as context creation does. */
const platform = { principal: "tester", platform: "context" };
const subscribe = (host: string) => ({
  type: SUBSCRIPTION_CONFIGURED,
  payload: { key: "tally", subscription: { type: "processor", binding: "TEST_PROCESSORS", host, processor: "tally" } },
});
const tallies = (count: number, from = 0) => Array.from({ length: count }, (_, i) => ({ type: "test/tally-added", payload: { n: from + i } }));

async function snapshot(host: string) {
  return env.TEST_PROCESSORS.getByName(host).snapshot() as Promise<{ offset: number; state: { count: number; offsets: number[] } }>;
}

describe("hosted processors", () => {
  test("a subscription wakes the host, which folds every event once and appends its own facts", async () => {
    const { stream: name, host } = names();
    const stream = streamStub(env.STREAM, name);
    await stream.append({ events: tallies(3), stamp });
    await stream.append({ events: [subscribe(host)], stamp: platform });
    await stream.append({ events: tallies(4, 3), stamp });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 5000 }).toBe(7);
    const milestones = await stream.getEvents({ types: ["test/tally-milestone-reached"] });
    expect(milestones.map((event) => event.payload)).toEqual([{ count: 5 }]);
    // The milestone reacts to the fifth tally (offset 6, after the subscription): one round on its chain.
    expect(milestones[0]?.source).toEqual({ platform: "processor-host:tally", processor: "tally", reaction: { began: "/tallies#6", round: 1 } });
    await expect.poll(async () => (await snapshot(host)).offset).toBe(await stream.head());
  });

  test("bad subscription rows are refused at append and change nothing", async () => {
    const { stream: name } = names();
    const stream = streamStub(env.STREAM, name);
    const bad = [
      { key: "x", subscription: { type: "processor", binding: "STREAM", host: "h", processor: "tally" } },
      { key: "x", subscription: { type: "processor", binding: "NOPE_PROCESSORS", host: "h", processor: "tally" } },
      { key: "X Y", subscription: null },
      { key: "x", subscription: { type: "webhook", binding: "TEST_PROCESSORS", host: "h", processor: "tally" } },
      { key: "x", subscription: null, extra: true },
    ];
    for (const payload of bad) {
      const code = await Promise.resolve(stream.append({ events: [{ type: SUBSCRIPTION_CONFIGURED, payload }], stamp: platform })).then(
        () => "resolved",
        (error: unknown) => errorCode(error),
      );
      expect(code, JSON.stringify(payload)).toBe("INVALID_ARGUMENT");
    }
    expect(await stream.head()).toBe(0);
  });

  test("a host aborted mid-work resumes from its checkpoint and folds each event exactly once", async () => {
    const { stream: name, host } = names();
    const stream = streamStub(env.STREAM, name);
    await stream.append({ events: [subscribe(host)], stamp: platform });
    for (let round = 0; round < 5; round++) {
      await stream.append({ events: tallies(20, round * 20), stamp });
      await runInDurableObject(env.TEST_PROCESSORS.getByName(host), (_instance, state) => state.abort("test: host crash")).catch(
        () => undefined,
      );
    }
    // The stream notices failed deliveries and retries them from the host's own checkpoint.
    await stream.append({ events: tallies(1, 100), stamp });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 15_000, interval: 200 }).toBe(101);
    const { state } = await snapshot(host);
    expect(new Set(state.offsets).size).toBe(state.offsets.length);
    const milestones = await stream.getEvents({ types: ["test/tally-milestone-reached"], limit: 500 });
    expect(milestones.map((event) => (event.payload as { count: number }).count)).toEqual([5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 100]);
  });

  test("a deleted checkpoint is rebuilt by replay to the same state", async () => {
    const { stream: name, host } = names();
    const stream = streamStub(env.STREAM, name);
    await stream.append({ events: [subscribe(host), ...tallies(12)], stamp: platform });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 5000 }).toBe(12);
    const before = await snapshot(host);
    await runInDurableObject(env.TEST_PROCESSORS.getByName(host), async (_instance, state) => {
      await state.storage.deleteAll();
      state.abort("test: forget everything");
    }).catch(() => undefined);
    await stream.append({ events: tallies(1, 12), stamp });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 15_000, interval: 200 }).toBe(13);
    const after = await snapshot(host);
    expect(after.state.offsets.slice(0, 12)).toEqual(before.state.offsets);
    // Rebuilding replays the fold but not the side effects: still exactly two milestones.
    const milestones = await stream.getEvents({ types: ["test/tally-milestone-reached"] });
    expect(milestones.map((event) => event.payload)).toEqual([{ count: 5 }, { count: 10 }]);
  });

  test("a stream aborted mid-delivery keeps its subscriptions and resumes delivery", async () => {
    const { stream: name, host } = names();
    await streamStub(env.STREAM, name).append({ events: [subscribe(host), ...tallies(3)], stamp: platform });
    await runInDurableObject(env.STREAM.getByName(name), (_instance, state) => state.abort("test: stream crash")).catch(() => undefined);
    const stream = streamStub(env.STREAM, name);
    await stream.append({ events: tallies(2, 3), stamp });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 10_000, interval: 200 }).toBe(5);
    const info = await stream.info();
    expect(info.processors.map((processor) => processor.key)).toEqual(["tally"]);
  });

  test("DELIVERY_BACKSTOP_MS: a commit due to processors arms the stream's alarm, once per stretch of commits; one due to none does not", async () => {
    const { stream: name, host } = names();
    const stream = streamStub(env.STREAM, name);
    const alarm = () => runInDurableObject(env.STREAM.getByName(name), (_instance, state) => state.storage.getAlarm());
    await stream.append({ events: tallies(1), stamp });
    expect(await alarm()).toBeNull();
    const before = Date.now();
    await stream.append({ events: [subscribe(host), ...tallies(1, 1)], stamp: platform });
    const armed = await expect.poll(alarm).not.toBeNull().then(alarm);
    expect(armed).toBeGreaterThanOrEqual(before + LIMITS.DELIVERY_BACKSTOP_MS - 1_000);
    expect(armed).toBeLessThanOrEqual(Date.now() + LIMITS.DELIVERY_BACKSTOP_MS);
    // Later commits find it standing: no write of their own.
    await stream.append({ events: tallies(2, 2), stamp });
    expect(await alarm()).toBe(armed);
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 5000 }).toBe(4);
    // It goes off, delivers what is due (nothing here), and stands again only with the next commit.
    expect(await runDurableObjectAlarm(env.STREAM.getByName(name))).toBe(true);
    expect(await alarm()).toBeNull();
    await stream.append({ events: tallies(1, 4), stamp });
    await expect.poll(alarm).not.toBeNull();
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 5000 }).toBe(5);
  });

  test("a host arms no revival alarm for a given-up claim: a tombstone stays, and must not wake its host forever", async () => {
    const { stream: name, host } = names();
    const claim = { slug: "tally", key: "job:1", attempts: 5, nextAttemptAt: 0, status: "given-up" };
    await runInDurableObject(env.TEST_PROCESSORS.getByName(host), (_instance, state) => state.storage.put("processor/tally/claim/job:1", claim));
    const stream = streamStub(env.STREAM, name);
    await stream.append({ events: [subscribe(host), ...tallies(2)], stamp: platform });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 5000 }).toBe(2);
    const alarm = () => runInDurableObject(env.TEST_PROCESSORS.getByName(host), (_instance, state) => state.storage.getAlarm());
    // Before, every wake found the tombstone and set the alarm, which found it again, forever.
    expect(await alarm()).toBeNull();
    expect((await runInDurableObject(env.TEST_PROCESSORS.getByName(host), (_instance, state) => state.storage.get("processor/tally/claim/job:1")))).toEqual(claim);
  });

  test("held appends reach the processor with the next append, or alone after a moment; waiters see them at once", async () => {
    const { stream: name, host } = names();
    const stream = streamStub(env.STREAM, name);
    await stream.append({ events: [subscribe(host)], stamp: platform });
    const [held] = await stream.append({ events: tallies(2), stamp, holdDelivery: true });
    expect(await stream.waitForEvent({ type: "test/tally-added", afterOffset: (held?.offset ?? 1) - 1, timeoutMs: 1000 })).toMatchObject({ offset: held?.offset });
    await stream.append({ events: tallies(1, 2), stamp });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 5000 }).toBe(3);
    await stream.append({ events: tallies(1, 3), stamp, holdDelivery: true });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 5000, interval: 100 }).toBe(4);
  });

  test("a host refuses a wake from any stream but its own, and a subscription naming another project's host is refused", async () => {
    const { stream: name, host } = names();
    const stream = streamStub(env.STREAM, name);
    await stream.append({ events: [subscribe(host), ...tallies(2)], stamp: platform });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 5000 }).toBe(2);
    // Another stream (another project's, or a sibling in the same one) naming this host.
    const foreign = names().stream;
    const woken = env.TEST_PROCESSORS.getByName(host) as unknown as { wakeStreamProcessor(input: unknown): Promise<unknown> };
    for (const coordinate of [foreign, `${name}-other`, undefined]) {
      const code = await Promise.resolve(woken.wakeStreamProcessor({ name: "tally", stream: {}, coordinate })).then(
        () => "resolved",
        (error: unknown) => errorCode(error),
      );
      expect(code, String(coordinate)).toBe("NOT_FOUND");
    }
    const row = { type: SUBSCRIPTION_CONFIGURED, payload: { key: "x", subscription: { type: "processor", binding: "TEST_PROCESSORS", host, processor: "tally" } } };
    const refused = await Promise.resolve(streamStub(env.STREAM, foreign).append({ events: [row], stamp: platform })).then(
      () => "resolved",
      (error: unknown) => errorCode(error),
    );
    expect(refused).toBe("INVALID_ARGUMENT");
    expect((await snapshot(host)).state.count).toBe(2);
  });

  test("a checkpoint that does not name its stream (moved by a foreign stream before hosts checked) is rebuilt from the host's own stream", async () => {
    const { stream: name, host } = names();
    const stream = streamStub(env.STREAM, name);
    await stream.append({ events: [subscribe(host), ...tallies(6)], stamp: platform });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 5000 }).toBe(6);
    const honest = await snapshot(host);
    // What the attack left behind: a checkpoint far past this stream's head, with foreign state,
    // and no record of which stream it folds (as every checkpoint written before this change).
    await runInDurableObject(env.TEST_PROCESSORS.getByName(host), async (_instance, state) => {
      const key = "processor/tally/checkpoint";
      const checkpoint = (await state.storage.get(key)) as Record<string, unknown>;
      await state.storage.put(key, { ...checkpoint, offset: 9_999, state: { count: 500, offsets: [9_999] } });
      await state.storage.delete("processor-host/stream");
      state.abort("test: restart after the attack");
    }).catch(() => undefined);
    await stream.append({ events: tallies(1, 6), stamp });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 15_000, interval: 200 }).toBe(7);
    const healed = await snapshot(host);
    expect(healed.offset).toBe(await stream.head());
    expect(healed.state.offsets.slice(0, 6)).toEqual(honest.state.offsets);
    // Rebuilt quietly: the one milestone (at 5) was not reached again.
    expect((await stream.getEvents({ types: ["test/tally-milestone-reached"] })).map((event) => event.payload)).toEqual([{ count: 5 }]);
  });
  test("an idle session ends when its host agrees, and the next event wakes the host again from its checkpoint", async () => {
    const { stream: name, host } = names();
    const stream = streamStub(env.STREAM, name);
    await stream.append({ events: [subscribe(host)], stamp: platform });
    await stream.append({ events: tallies(3), stamp });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 5000 }).toBe(3);
    const release = (idleMs: number) => runInDurableObject(env.STREAM.getByName(name), (instance: StreamDurableObject) => instance.releaseIdleSessions(idleMs));
    // Delivery done (a session under way is never released): the cursor is at the head.
    const delivered = async () => expect.poll(async () => (await stream.info()).processors[0]?.cursor).toBe(await stream.head());
    await delivered();
    // Used a moment ago: kept.
    expect(await release(60_000)).toBe(0);
    // A host that still needs it refuses.
    const hostStub = env.TEST_PROCESSORS.getByName(host) as unknown as { hold(held: boolean): Promise<void> };
    await hostStub.hold(true);
    expect(await release(0)).toBe(0);
    // A live subscriber is held only by the stream: while one is there, nothing is released.
    const subscription = await stream.subscribe({ callback: () => undefined, key: "watcher" });
    await hostStub.hold(false);
    expect(await release(0)).toBe(0);
    expect(await stream.unsubscribe(subscription.key)).toBe(true);
    expect(await release(0)).toBe(1);
    // Nothing left to release; the next events wake the host, which folds each one exactly once.
    expect(await release(0)).toBe(0);
    await stream.append({ events: tallies(4, 3), stamp });
    await expect.poll(async () => (await snapshot(host)).state.count, { timeout: 5000 }).toBe(7);
    const { state, offset } = await snapshot(host);
    expect(new Set(state.offsets).size).toBe(7);
    expect(offset).toBe(await stream.head());
    const milestones = await stream.getEvents({ types: ["test/tally-milestone-reached"] });
    expect(milestones.map((event) => event.payload)).toEqual([{ count: 5 }]);
    // The woken session is released again once idle.
    await delivered();
    expect(await release(0)).toBe(1);
  });
});
