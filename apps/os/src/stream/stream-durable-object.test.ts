import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import { streamStub } from "./stream-rpc-target.ts";
import type { StreamEvent } from "iterate/types";
import { STREAM_LIMITS } from "iterate/stream/events";
import { unpackEvents } from "iterate/client";
import { CAPABILITY_PROVIDED, CAPABILITY_REVOKED, STREAM_CORE_VERSION, SUBSCRIPTION_CONFIGURED } from "./stream-core.ts";
import { CONTROL_EVENTS } from "./write-authority.ts";
import { expectCode } from "iterate/stream/test-support";
import { LIMITS } from "../limits.ts";
import { ephemeralBytesQueued } from "./live-subscribers.ts";
import { RUN_REQUESTED, RUN_SETTLED } from "../capability-host/itx-contract.ts";

let counter = 0;
/** A unique coordinate per test, so tests never share state. */
function freshName(path = "/test"): string {
  counter += 1;
  return `prj_test${Date.now()}${counter}:${path}`;
}
function freshStream(path = "/test") {
  return streamStub(env.STREAM, freshName(path));
}


const stamp = { principal: "tester", origin: "/test" };

describe("append", () => {
  test("numbers durable events 1, 2, 3 with no gaps and stamps createdAt and path", async () => {
    const stream = freshStream("/agents/a");
    const first = await stream.append({ events: [{ type: "demo/ping" }, { type: "demo/ping", payload: { n: 2 } }], stamp });
    const second = await stream.append({ events: [{ type: "demo/pong" }], stamp });
    expect([...first, ...second].map((event) => event.offset)).toEqual([1, 2, 3]);
    expect(first[0]?.streamPath).toBe("/agents/a");
    expect(first[0]?.payload).toEqual({});
    expect(Date.parse(first[0]?.createdAt ?? "")).not.toBeNaN();
    expect(await stream.head()).toBe(3);
  });

  test("the platform stamps source; a writer's own values, processor included, are dropped", async () => {
    const stream = freshStream();
    const [event] = await stream.append({
      events: [{ type: "demo/ping", source: { origin: "/forged", principal: "mallory", platform: "agent", processor: "agent" } }],
      stamp,
    });
    expect(event?.source).toEqual({ principal: "tester", origin: "/test" });
  });

  test("source.processor is kept only from a processor host, and only as its own slug", async () => {
    const stream = freshStream();
    const [hosted, agent] = await Promise.all([
      stream.append({ events: [{ type: "demo/ping", source: { processor: "agent" } }], stamp: { platform: "processor-host:tally" } }),
      stream.append({ events: [{ type: "demo/ping", source: { processor: "agent" } }], stamp: { origin: "/agents/a", platform: "agent" } }),
    ]);
    expect(hosted[0]?.source).toEqual({ platform: "processor-host:tally", processor: "tally" });
    expect(agent[0]?.source).toEqual({ origin: "/agents/a", platform: "agent", processor: "agent" });
  });

  test("platform event types are refused from ordinary writers, and the whole batch writes nothing", async () => {
    const stream = freshStream();
    for (const type of [...Object.keys(CONTROL_EVENTS), "events.iterate.com/repo/commit-completed", "events.iterate.com/scheduler/schedule-fired"]) {
      const refused = await expectCode(stream.append({ events: [{ type: "demo/ok" }, { type, payload: {} }], stamp }), "PERMISSION_DENIED", type);
      expect(refused.message, type).toContain(type);
      // Ephemeral ones too: viewers would take a forged frame for the agent's words.
      await expectCode(stream.append({ events: [{ type, ephemeral: true }], stamp }), "PERMISSION_DENIED", type);
    }
    expect(await stream.head()).toBe(0);
    // Open types, and anyone's own, are anybody's.
    await stream.append({ events: [{ type: "events.iterate.com/agent/context-added", payload: { role: "user", content: "hi" } }, { type: "demo/ok" }], stamp });
    expect(await stream.head()).toBe(2);
  });

  test("idempotency keys in a platform namespace are the platform's: nobody squats itx/created or agent/created", async () => {
    const stream = freshStream();
    for (const key of ["itx/created", "agent/created", "itx/subscription-configured:core", "token/revoked:tok_x", "project/slug-claimed:x"]) {
      await expectCode(stream.append({ events: [{ type: "demo/squat", idempotencyKey: key }], stamp }), "PERMISSION_DENIED", key);
    }
    await stream.append({ events: [{ type: "demo/mine", idempotencyKey: "demo/itx/created" }], stamp });
    await stream.append({ events: [{ type: "demo/platform", idempotencyKey: "itx/created" }], stamp: { ...stamp, platform: "context" } });
    expect(await stream.head()).toBe(2);
  });

  test("a platform writer may append only the control types its rule names", async () => {
    const stream = freshStream();
    const row = { type: SUBSCRIPTION_CONFIGURED, payload: { key: "core", subscription: null } };
    await expectCode(stream.append({ events: [row], stamp: { ...stamp, platform: "secret" } }), "PERMISSION_DENIED");
    await expectCode(stream.append({ events: [row], stamp: { ...stamp, platform: "processor-host:tally" } }), "PERMISSION_DENIED");
    await stream.append({ events: [row], stamp: { ...stamp, platform: "context" } });
    expect(await stream.head()).toBe(1);
  });

  test("an idempotent repeat answers the stored event; a different body is IDEMPOTENCY_CONFLICT", async () => {
    const stream = freshStream();
    const [original] = await stream.append({ events: [{ type: "demo/step", payload: { a: 1, b: [1] }, idempotencyKey: "k1" }], stamp });
    const [again] = await stream.append({ events: [{ type: "demo/step", payload: { b: [1], a: 1 }, idempotencyKey: "k1" }], stamp });
    expect(again).toEqual(original);
    expect(await stream.head()).toBe(1);
    await expectCode(stream.append({ events: [{ type: "demo/step", payload: { a: 2 }, idempotencyKey: "k1" }], stamp }), "IDEMPOTENCY_CONFLICT");
    // A conflict anywhere in a call rejects the whole call.
    await expectCode(stream.append({ events: [{ type: "demo/new" }, { type: "demo/other", idempotencyKey: "k1" }], stamp }), "IDEMPOTENCY_CONFLICT");
    expect(await stream.head()).toBe(1);
  });

  test("the same key twice in one call lands once", async () => {
    const stream = freshStream();
    const events = await stream.append({
      events: [
        { type: "demo/step", idempotencyKey: "k" },
        { type: "demo/step", idempotencyKey: "k" },
      ],
      stamp,
    });
    expect(events.map((event) => event.offset)).toEqual([1, 1]);
    expect(await stream.head()).toBe(1);
  });

  test("expectedOffset fails with OFFSET_CONFLICT when the head moved, and changes nothing", async () => {
    const stream = freshStream();
    await stream.append({ events: [{ type: "demo/a" }], expectedOffset: 0, stamp });
    await expectCode(stream.append({ events: [{ type: "demo/b" }], expectedOffset: 0, stamp }), "OFFSET_CONFLICT");
    await stream.append({ events: [{ type: "demo/b" }], expectedOffset: 1, stamp });
    expect(await stream.head()).toBe(2);
  });

  test("ephemeral events carry the head offset, are never stored, and reach only live subscribers", async () => {
    const stream = freshStream();
    await stream.append({ events: [{ type: "demo/a" }], stamp });
    const seen: StreamEvent[] = [];
    await stream.subscribe({ callback: (batch: StreamEvent[]) => void seen.push(...batch) });
    const [poke] = await stream.append({ events: [{ type: "demo/poke", ephemeral: true }], stamp });
    expect(poke?.offset).toBe(1);
    expect(poke?.ephemeral).toBe(true);
    await stream.append({ events: [{ type: "demo/b" }], stamp });
    await expect.poll(() => seen.map((event) => event.type)).toEqual(["demo/a", "demo/poke", "demo/b"]);
    expect((await stream.getEvents({})).map((event) => event.type)).toEqual(["demo/a", "demo/b"]);
    expect(await stream.head()).toBe(2);
    const late: StreamEvent[] = [];
    await stream.subscribe({ callback: (batch: StreamEvent[]) => void late.push(...batch) });
    await expect.poll(() => late.length).toBe(2);
    expect(late.map((event) => event.type)).toEqual(["demo/a", "demo/b"]);
  });
});

/** Bytes of a page's payloads as stored (their JSON; these are ASCII). */
function payloadBytes(events: StreamEvent[]): number {
  return events.reduce((sum, event) => sum + JSON.stringify(event.payload).length, 0);
}

describe("reads", () => {
  test("getEvents uses exclusive bounds, filters types and caps the limit", async () => {
    const stream = freshStream();
    await stream.append({ events: Array.from({ length: 10 }, (_, i) => ({ type: i % 2 ? "demo/odd" : "demo/even", payload: { i } })), stamp });
    expect((await stream.getEvents({ afterOffset: 2, beforeOffset: 6 })).map((event) => event.offset)).toEqual([3, 4, 5]);
    expect((await stream.getEvents({ types: ["demo/odd"], limit: 2 })).map((event) => event.offset)).toEqual([2, 4]);
    await expectCode(stream.getEvents({ limit: STREAM_LIMITS.READ_MAX_LIMIT + 1 }), "INVALID_ARGUMENT");
    await expectCode(stream.getEvents({ afterOffset: -1 }), "INVALID_ARGUMENT");
    await expectCode(stream.getEvents({ afterOffset: 1.5 }), "INVALID_ARGUMENT");
    await expectCode(stream.getEvents({ after: 1 }), "INVALID_ARGUMENT");
  });

  test("getEventsPacked unpacks to the same events as getEvents", async () => {
    const stream = freshStream();
    await stream.append({ events: [{ type: "demo/a", payload: { text: 'quote " and \\ slash', n: [1, { x: null }] }, idempotencyKey: "k" }, { type: "demo/b" }], stamp });
    expect(unpackEvents(await stream.getEventsPacked({}))).toEqual(await stream.getEvents({}));
    expect(unpackEvents(await stream.getEventsPacked({ format: 2 }))).toEqual(await stream.getEvents({}));
    expect(unpackEvents(await stream.getEventsPacked({ format: 3 }))).toEqual(await stream.getEvents({}));
    await expectCode(stream.getEventsPacked({ format: 4 }), "INVALID_ARGUMENT");
  });

  test("getEventsPacked pages by offset bounds and limit like getEvents, across sources and commit times", async () => {
    const stream = freshStream();
    await stream.append({ events: [{ type: "demo/a", idempotencyKey: "first" }, { type: "demo/b" }], stamp });
    await stream.append({ events: [{ type: "demo/c", payload: { n: 3 } }], stamp: { principal: "other", origin: "/elsewhere" } });
    await stream.append({ events: [{ type: "demo/d" }, { type: "demo/e", idempotencyKey: "last" }], stamp });
    const bounds = [{}, { afterOffset: 1 }, { afterOffset: 1, limit: 2 }, { afterOffset: 2, beforeOffset: 5 }, { beforeOffset: 3, limit: 9 }, { afterOffset: 5 }, { afterOffset: 9 }];
    for (const input of bounds) {
      const events = await stream.getEvents(input);
      expect(unpackEvents(await stream.getEventsPacked(input)), JSON.stringify(input)).toEqual(events);
      expect(unpackEvents(await stream.getEventsPacked({ ...input, format: 2 })), `format 2 ${JSON.stringify(input)}`).toEqual(events);
      expect(unpackEvents(await stream.getEventsPacked({ ...input, format: 3 })), `format 3 ${JSON.stringify(input)}`).toEqual(events);
    }
    expect(unpackEvents(await stream.getEventsPacked({ afterOffset: 1, limit: 2 })).map((event) => event.offset)).toEqual([2, 3]);
    // Format 2 rows carry no offset: row i is `from + i`. It names only the types and sources its page uses.
    const whole = JSON.parse(await stream.getEventsPacked({ afterOffset: 1, format: 2 })) as { from: number; rows: unknown[][] };
    expect(whole.from).toBe(2);
    expect(whole.rows.map((row) => row.length)).toEqual([5, 5, 5, 5]);
    const page = JSON.parse(await stream.getEventsPacked({ afterOffset: 2, limit: 1, format: 2 })) as { types: Record<string, string>; sources: Record<string, unknown> };
    expect(Object.values(page.types)).toEqual(["demo/c"]);
    expect(Object.values(page.sources)).toEqual([{ principal: "other", origin: "/elsewhere" }]);
    // Format 3: one run per change of type, source or commit (a page's first event starts one too),
    // keys by offset, the payloads as stored.
    const runs = JSON.parse(await stream.getEventsPacked({ afterOffset: 1, format: 3 })) as { from: number; runs: number[]; keys: Record<string, string>; payloads: unknown[] };
    expect(runs.from).toBe(2);
    expect(runs.runs.filter((_, i) => i % 4 === 0)).toEqual([2, 3, 4, 5]);
    expect(runs.keys).toEqual({ "5": "last" });
    expect(runs.payloads).toEqual([{}, { n: 3 }, {}, {}]);
  });

  test("a packed format 3 page runs events together while type, source and commit time stay the same", async () => {
    const stream = freshStream();
    await stream.append({ events: Array.from({ length: 5 }, (_, i) => ({ type: "demo/a", payload: { i } })), stamp });
    await stream.append({ events: [{ type: "demo/a", payload: { i: 5 } }, { type: "demo/b", payload: { i: 6 } }, { type: "demo/a", payload: { i: 7 } }], stamp });
    const page = JSON.parse(await stream.getEventsPacked({ format: 3 })) as { runs: number[]; payloads: unknown[] };
    // The second commit starts a run at 6 (a new time), then 7 (a new type) and 8 (the type again).
    expect(page.runs.filter((_, i) => i % 4 === 0)).toEqual([1, 6, 7, 8]);
    expect(page.payloads).toHaveLength(8);
    const events = unpackEvents(JSON.stringify(page));
    expect(events).toEqual(await stream.getEvents({}));
    // No two events share a source object.
    expect(events[0]?.source).not.toBe(events[1]?.source);
  });

  test(`READ_PAGE_MAX_BYTES (${LIMITS.READ_PAGE_MAX_BYTES}): getEvents and every getEventsPacked format stop before a page's payloads pass it, and read on from the last offset`, async () => {
    const stream = freshStream();
    // 20 events of ~250,000 bytes (5 MB), four to an append (APPEND_MAX_BYTES).
    for (let commit = 0; commit < 5; commit++) {
      await stream.append({ events: Array.from({ length: 4 }, (_, i) => ({ type: "demo/big", payload: { i: commit * 4 + i, blob: "x".repeat(250_000) } })), stamp });
    }
    const readers: Record<string, (afterOffset: number) => Promise<StreamEvent[]>> = {
      getEvents: async (afterOffset) => stream.getEvents({ afterOffset, limit: STREAM_LIMITS.READ_MAX_LIMIT }),
      typed: async (afterOffset) => stream.getEvents({ afterOffset, limit: STREAM_LIMITS.READ_MAX_LIMIT, types: ["demo/big"] }),
      packed1: async (afterOffset) => unpackEvents(await stream.getEventsPacked({ afterOffset, limit: LIMITS.READ_JSON_MAX_LIMIT })),
      packed2: async (afterOffset) => unpackEvents(await stream.getEventsPacked({ afterOffset, limit: LIMITS.READ_JSON_MAX_LIMIT, format: 2 })),
      packed3: async (afterOffset) => unpackEvents(await stream.getEventsPacked({ afterOffset, limit: LIMITS.READ_JSON_MAX_LIMIT, format: 3 })),
    };
    for (const [name, read] of Object.entries(readers)) {
      const pages: number[] = [];
      const seen: number[] = [];
      for (let after = 0; after < 20; ) {
        const page = await read(after);
        expect(payloadBytes(page), name).toBeLessThanOrEqual(LIMITS.READ_PAGE_MAX_BYTES);
        pages.push(page.length);
        seen.push(...page.map((event) => event.offset));
        after = (page.at(-1) as StreamEvent).offset;
      }
      // 16 events fit in 4 MiB; the next page has the rest.
      expect(pages, name).toEqual([16, 4]);
      expect(seen, name).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    }
  });

  test("waitForEvent finds history, waits for the future, and times out with TIMEOUT", async () => {
    const stream = freshStream();
    await stream.append({ events: [{ type: "demo/settled", payload: { requestOffset: 7, status: "succeeded" } }], stamp });
    const found = await stream.waitForEvent({ type: "demo/settled", payload: { requestOffset: 7 }, timeoutMs: 1000 });
    expect(found.offset).toBe(1);
    const later = stream.waitForEvent({ type: "demo/settled", payload: { requestOffset: 9 }, afterOffset: 1, timeoutMs: 5000 });
    await stream.append({ events: [{ type: "demo/settled", payload: { requestOffset: 8 } }], stamp });
    await stream.append({ events: [{ type: "demo/settled", payload: { requestOffset: 9, status: "failed" } }], stamp });
    expect((await later).offset).toBe(3);
    await expectCode(stream.waitForEvent({ type: "demo/never", timeoutMs: 50 }), "TIMEOUT");
    await expectCode(stream.waitForEvent({ type: "demo/never", timeoutMs: STREAM_LIMITS.WAIT_MAX_TIMEOUT_MS + 1 }), "INVALID_ARGUMENT");
  });

  test("STREAM_WAITERS_MAX and WAIT_SCAN_MAX_EVENTS: a wait past either is refused; history is looked through window by window", async () => {
    const limits = LIMITS as Record<string, number>;
    const saved = { ...limits };
    Object.assign(limits, { STREAM_WAITERS_MAX: 3, WAIT_SCAN_MAX_EVENTS: 50, WAIT_SCAN_WINDOW_EVENTS: 7 });
    try {
      const stream = freshStream();
      // 50 events, one match per type at offsets 3 and 48: windows of 7 find both, in order.
      await stream.append({ events: Array.from({ length: 50 }, (_, i) => ({ type: i === 2 || i === 47 ? "demo/hit" : "demo/miss", payload: { i } })), stamp });
      expect((await stream.waitForEvent({ type: "demo/hit", timeoutMs: 10 })).offset).toBe(3);
      expect((await stream.waitForEvent({ type: "demo/hit", afterOffset: 3, timeoutMs: 10 })).offset).toBe(48);
      expect((await stream.waitForEvent({ payload: { i: 47 }, afterOffset: 3, timeoutMs: 10 })).offset).toBe(48);
      // One more event puts the start 51 behind the head: refused before anything is read.
      await stream.append({ events: [{ type: "demo/miss" }], stamp });
      const far = await expectCode(stream.waitForEvent({ type: "demo/hit", timeoutMs: 10 }), "LIMIT_EXCEEDED");
      expect((far as { details?: { limit?: string } }).details?.limit).toBe("WAIT_SCAN_MAX_EVENTS");
      // Three callers wait; a fourth is refused, and room comes back when one is answered.
      const waiting = [1, 2, 3].map((n) => stream.waitForEvent({ type: "demo/later", payload: { n }, afterOffset: 51, timeoutMs: 5_000 }));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const full = await expectCode(stream.waitForEvent({ type: "demo/later", afterOffset: 51, timeoutMs: 5_000 }), "LIMIT_EXCEEDED");
      expect((full as { details?: { limit?: string } }).details?.limit).toBe("STREAM_WAITERS_MAX");
      await stream.append({ events: [1, 2, 3].map((n) => ({ type: "demo/later", payload: { n } })), stamp });
      expect((await Promise.all(waiting)).map((event) => event.offset)).toEqual([52, 53, 54]);
      expect((await stream.waitForEvent({ type: "demo/later", afterOffset: 51, timeoutMs: 10 })).offset).toBe(52);
    } finally {
      Object.assign(limits, saved);
    }
  });
});

describe("live subscriptions", () => {
  test("replay from an offset, then the live tail, in order", async () => {
    const stream = freshStream();
    for (let chunk = 0; chunk < 3; chunk++) {
      await stream.append({ events: Array.from({ length: 400 }, (_, i) => ({ type: "demo/n", payload: { i } })), stamp });
    }
    const seen: number[] = [];
    await stream.subscribe({ afterOffset: 100, callback: (batch: StreamEvent[]) => void seen.push(...batch.map((event) => event.offset)) });
    await stream.append({ events: [{ type: "demo/n" }], stamp });
    await expect.poll(() => seen.length, { timeout: 5000 }).toBe(1101);
    expect(seen).toEqual(Array.from({ length: 1101 }, (_, i) => i + 101));
  });

  test("unsubscribe stops delivery; the same key replaces the first subscription", async () => {
    const stream = freshStream();
    const first: number[] = [];
    const second: number[] = [];
    await stream.subscribe({ key: "ui", callback: (batch: StreamEvent[]) => void first.push(...batch.map((event) => event.offset)) });
    await stream.append({ events: [{ type: "demo/a" }], stamp });
    await expect.poll(() => first).toEqual([1]);
    await stream.subscribe({ key: "ui", afterOffset: 1, callback: (batch: StreamEvent[]) => void second.push(...batch.map((event) => event.offset)) });
    await stream.append({ events: [{ type: "demo/b" }], stamp });
    await expect.poll(() => second).toEqual([2]);
    expect(first).toEqual([1]);
    expect(await stream.unsubscribe("ui")).toBe(true);
    await stream.append({ events: [{ type: "demo/c" }], stamp });
    await new Promise((done) => setTimeout(done, 50));
    expect(second).toEqual([2]);
    expect(await stream.unsubscribe("ui")).toBe(false);
  });
});

describe("live subscribers that do not keep up", () => {
  test("LIVE_SUBSCRIBER_EPHEMERAL_MAX_EVENTS and _BYTES: a subscriber whose callback does not answer is closed once its waiting ephemeral events pass either; the others keep theirs", async () => {
    const limits = LIMITS as Record<string, number>;
    const saved = { ...limits };
    Object.assign(limits, { LIVE_SUBSCRIBER_EPHEMERAL_MAX_EVENTS: 3, LIVE_SUBSCRIBER_EPHEMERAL_MAX_BYTES: 1_500 });
    const releases: Array<() => void> = [];
    try {
      for (const [name, payload, sent] of [["count", {}, 5], ["bytes", { text: "x".repeat(800) }, 3]] as const) {
        const stream = freshStream();
        const stuck: number[] = [];
        const healthy: StreamEvent[] = [];
        // Takes the first batch and never answers it.
        await stream.subscribe({ key: "stuck", callback: (batch: StreamEvent[]) => new Promise<void>((resolve) => void (stuck.push(batch.length), releases.push(resolve))) });
        await stream.subscribe({ key: "healthy", callback: (batch: StreamEvent[]) => void healthy.push(...batch) });
        // count: one in flight, three waiting, the fifth is one too many. bytes: one in flight,
        // ~900 (the event as JSON) waiting, and the third would make ~1,800.
        for (let i = 0; i < sent; i++) await stream.append({ events: [{ type: "demo/tick", payload, ephemeral: true }], stamp });
        await expect.poll(() => healthy.length, { timeout: 5_000 }).toBe(sent);
        await expect.poll(async () => (await stream.info()).liveSubscribers, { timeout: 5_000, message: name }).toBe(1);
        expect(stuck, name).toEqual([1]);
        await stream.append({ events: [{ type: "demo/after" }], stamp });
        await expect.poll(() => healthy.length).toBe(sent + 1);
        expect(stuck, name).toEqual([1]);
      }
      // Under the bounds a slow subscriber keeps up: a fresh one falls behind by three and is answered.
      const stream = freshStream();
      const got: number[] = [];
      await stream.subscribe({ callback: (batch: StreamEvent[]) => new Promise<void>((resolve) => setTimeout(() => (got.push(batch.length), resolve()), 20)) });
      for (let i = 0; i < 4; i++) await stream.append({ events: [{ type: "demo/tick", ephemeral: true }], stamp });
      await expect.poll(() => got.reduce((sum, n) => sum + n, 0), { timeout: 5_000 }).toBe(4);
      expect((await stream.info()).liveSubscribers).toBe(1);
    } finally {
      Object.assign(limits, saved);
      for (const release of releases) release();
    }
  });

  test("LIVE_EPHEMERAL_QUEUED_MAX_BYTES: stuck subscribers on many streams together hold at most the isolate's bound; the one holding the most is closed first, and a keeping-up subscriber elsewhere stays", async () => {
    const limits = LIMITS as Record<string, number>;
    const saved = { ...limits };
    // Each stuck subscriber may hold 4 KB, the isolate 8 KB; an event here is about 1.06 KB as JSON.
    // The stuck subscribers have distinct type filters, so no queued event is shared.
    Object.assign(limits, { LIVE_SUBSCRIBER_EPHEMERAL_MAX_BYTES: 4_000, LIVE_EPHEMERAL_QUEUED_MAX_BYTES: 8_000 });
    const releases: Array<() => void> = [];
    try {
      const streams = [freshStream(), freshStream(), freshStream()];
      const stuckCalls: number[][] = streams.map(() => []);
      for (const [i, stream] of streams.entries()) {
        // Takes the first batch and never answers it.
        await stream.subscribe({ key: "stuck", types: [`demo/t${i}`], callback: (batch: StreamEvent[]) => new Promise<void>((resolve) => void ((stuckCalls[i] as number[]).push(batch.length), releases.push(resolve))) });
      }
      const slow = freshStream();
      const slowGot: number[] = [];
      await slow.subscribe({ key: "slow", callback: (batch: StreamEvent[]) => new Promise<void>((resolve) => setTimeout(() => (slowGot.push(batch.length), resolve()), 20)) });
      const payload = { text: "x".repeat(900) };
      // Each takes one in flight; then stream 0 queues three, streams 1 and 2 two each: about 7.4 KB.
      for (const [i, count] of [[0, 4], [1, 3], [2, 3]] as const) {
        for (let n = 0; n < count; n++) await (streams[i] as ReturnType<typeof freshStream>).append({ events: [{ type: `demo/t${i}`, payload, ephemeral: true }], stamp });
        await expect.poll(() => (stuckCalls[i] as number[]).length).toBe(1);
      }
      expect(ephemeralBytesQueued()).toBeGreaterThan(7_000);
      expect(ephemeralBytesQueued()).toBeLessThanOrEqual(8_000);
      for (const stream of streams) expect((await stream.info()).liveSubscribers).toBe(1);
      // One more on stream 2 would make about 8.5 KB: stream 0, holding the most, is closed, and stream 2 queues it.
      await (streams[2] as ReturnType<typeof freshStream>).append({ events: [{ type: "demo/t2", payload, ephemeral: true }], stamp });
      await expect.poll(async () => (await (streams[0] as ReturnType<typeof freshStream>).info()).liveSubscribers, { timeout: 5_000 }).toBe(0);
      expect((await (streams[1] as ReturnType<typeof freshStream>).info()).liveSubscribers).toBe(1);
      expect((await (streams[2] as ReturnType<typeof freshStream>).info()).liveSubscribers).toBe(1);
      expect(ephemeralBytesQueued()).toBeLessThanOrEqual(8_000);
      expect(ephemeralBytesQueued()).toBeGreaterThan(5_000);
      // A subscriber that keeps up is not the largest, and gets everything.
      for (let n = 0; n < 3; n++) await slow.append({ events: [{ type: "demo/tick", ephemeral: true }], stamp });
      await expect.poll(() => slowGot.reduce((sum, k) => sum + k, 0), { timeout: 5_000 }).toBe(3);
      expect((await slow.info()).liveSubscribers).toBe(1);
      for (const stream of [...streams, slow]) await stream.unsubscribe("stuck");
      await slow.unsubscribe("slow");
      expect(ephemeralBytesQueued()).toBe(0);
    } finally {
      Object.assign(limits, saved);
      for (const release of releases) release();
    }
  });

  test("LIVE_SUBSCRIBER_CALLBACK_TIMEOUT_MS: a callback that does not answer a batch in time closes its subscriber, and it is sent nothing more", async () => {
    const limits = LIMITS as Record<string, number>;
    const saved = { ...limits };
    Object.assign(limits, { LIVE_SUBSCRIBER_CALLBACK_TIMEOUT_MS: 100 });
    const releases: Array<() => void> = [];
    try {
      const stream = freshStream();
      const stuck: number[] = [];
      const healthy: number[] = [];
      await stream.subscribe({ key: "stuck", callback: (batch: StreamEvent[]) => new Promise<void>((resolve) => void (stuck.push(...batch.map((event) => event.offset)), releases.push(resolve))) });
      await stream.subscribe({ key: "healthy", callback: (batch: StreamEvent[]) => void healthy.push(...batch.map((event) => event.offset)) });
      await stream.append({ events: [{ type: "demo/a" }], stamp });
      await expect.poll(async () => (await stream.info()).liveSubscribers, { timeout: 5_000 }).toBe(1);
      await stream.append({ events: [{ type: "demo/b" }], stamp });
      await expect.poll(() => healthy).toEqual([1, 2]);
      expect(stuck).toEqual([1]);
    } finally {
      Object.assign(limits, saved);
      for (const release of releases) release();
    }
  });
});

describe("limits and bad input change nothing", () => {
  const big = "x".repeat(STREAM_LIMITS.EVENT_MAX_BYTES);
  let deep: unknown = "leaf";
  for (let i = 0; i <= STREAM_LIMITS.PAYLOAD_MAX_DEPTH; i++) deep = { d: deep };
  test.each([
    ["EVENT_MAX_BYTES", [{ type: "demo/big", payload: { big } }]],
    ["APPEND_MAX_BYTES", Array.from({ length: 5 }, () => ({ type: "demo/big", payload: { big: big.slice(0, 250_000) } }))],
    ["APPEND_MAX_EVENTS", Array.from({ length: STREAM_LIMITS.APPEND_MAX_EVENTS + 1 }, () => ({ type: "demo/a" }))],
    ["PAYLOAD_MAX_DEPTH", [{ type: "demo/deep", payload: deep }]],
    ["EVENT_TYPE_MAX_LENGTH", [{ type: `demo/${"a".repeat(STREAM_LIMITS.EVENT_TYPE_MAX_LENGTH)}` }]],
    ["a type with spaces", [{ type: "demo ping" }]],
    ["an empty type", [{ type: "" }]],
    ["a platform type with a third segment", [{ type: "events.iterate.com/itx/run/requested" }]], // invalid on purpose
    ["a platform type in camelCase", [{ type: "events.iterate.com/itx/runRequested" }]], // invalid on purpose
    ["an unknown field", [{ type: "demo/a", colour: "red" }]],
    ["a payload of the wrong kind", [{ type: "demo/a", payload: () => 1 }]],
    ["a non-object event", ["demo/a"]],
    ["an empty call", []],
    ["a long idempotency key", [{ type: "demo/a", idempotencyKey: "k".repeat(STREAM_LIMITS.IDEMPOTENCY_KEY_MAX_LENGTH + 1) }]],
  ])("%s is INVALID_ARGUMENT", async (_name, events) => {
    const stream = freshStream();
    await stream.append({ events: [{ type: "demo/first" }], stamp });
    await expectCode(stream.append({ events: events as never[], stamp }), "INVALID_ARGUMENT");
    expect(await stream.head()).toBe(1);
    expect((await stream.getEvents({})).length).toBe(1);
  });
});

/** A row of a context's capability table, as its capability host appends it. */
const capabilityRow = (change: "provided" | "revoked", payload: Record<string, unknown>) => ({ type: change === "provided" ? CAPABILITY_PROVIDED : CAPABILITY_REVOKED, payload });

describe("crashes", () => {
  test("an aborted Durable Object loses no acknowledged event", async () => {
    const name = freshName();
    const before = streamStub(env.STREAM, name);
    for (let i = 0; i < 20; i++) await before.append({ events: [{ type: "demo/n", payload: { i } }], stamp });
    // Abort while appends are in flight: each one either committed and was acknowledged, or failed.
    const inFlight = Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => before.append({ events: [{ type: "demo/late", payload: { i } }], stamp })),
    );
    await runInDurableObject(env.STREAM.getByName(name), (_instance, state) => {
      state.abort("test: crash mid-work");
    }).catch(() => undefined);
    const settled = await inFlight;
    const acknowledged = settled.filter((result) => result.status === "fulfilled").length;
    const stream = streamStub(env.STREAM, name);
    const events = await stream.getEvents({ limit: 500 });
    expect(events.filter((event) => event.type === "demo/late").length).toBeGreaterThanOrEqual(acknowledged);
    events.splice(20);
    expect(events.map((event) => event.offset)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const [next] = await stream.append({ events: [{ type: "demo/n" }], stamp });
    expect(next?.offset).toBe(21);
  });

  test("a jail's rows are folded at the offsets they are written at: a revoke naming an older null row leaves the jail shut, also after a restart", async () => {
    const name = freshName();
    const host = { principal: "tester", platform: "capability-host" };
    const [first] = await streamStub(env.STREAM, name).append({ events: [capabilityRow("provided", { path: [], kind: "null" })], stamp: host });
    const firstAt = first?.offset ?? 0;
    await streamStub(env.STREAM, name).append({ events: [capabilityRow("revoked", { path: [], providedAtOffset: firstAt })], stamp: host });
    await streamStub(env.STREAM, name).append({ events: [{ type: "demo/open" }], stamp });
    // Shut again; then a revoke that names the first row, as one read before the second landed would.
    await streamStub(env.STREAM, name).append({ events: [capabilityRow("provided", { path: [], kind: "null" })], stamp: host });
    await streamStub(env.STREAM, name).append({ events: [capabilityRow("revoked", { path: [], providedAtOffset: firstAt })], stamp: host });
    await expectCode(streamStub(env.STREAM, name).append({ events: [{ type: "demo/in" }], stamp }), "PERMISSION_DENIED");
    await runInDurableObject(env.STREAM.getByName(name), (_instance, state) => state.abort("test: a new incarnation")).catch(() => undefined);
    await expectCode(streamStub(env.STREAM, name).append({ events: [{ type: "demo/in" }], stamp }), "PERMISSION_DENIED");
  });

  test("a core checkpoint of another version is dropped: the next incarnation replays the fold and saves it in STREAM_CORE_VERSION", async () => {
    const name = freshName();
    await streamStub(env.STREAM, name).append({ events: [{ type: "demo/n" }], stamp });
    // Written by an older fold (no version), and wrong: it holds a jail no event set.
    await runInDurableObject(env.STREAM.getByName(name), (_instance, state) => {
      state.storage.sql.exec(
        "INSERT INTO meta(key, value) VALUES ('core-checkpoint', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        JSON.stringify({ offset: 1, state: { subscriptions: {}, jailed: true } }),
      );
    });
    await runInDurableObject(env.STREAM.getByName(name), (_instance, state) => state.abort("test: a new incarnation")).catch(() => undefined);
    const [next] = await streamStub(env.STREAM, name).append({ events: [{ type: "demo/n" }], stamp });
    expect(next?.offset).toBe(2);
    const saved = await runInDurableObject(env.STREAM.getByName(name), (_instance, state) =>
      JSON.parse(state.storage.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'core-checkpoint'").one().value),
    );
    expect(saved).toEqual({ offset: 1, state: { subscriptions: {} }, version: STREAM_CORE_VERSION });
  });
});

describe("bulk JSON reads", () => {
  test("READ_JSON_MAX_LIMIT bounds a page; type filters are refused", async () => {
    const stream = freshStream();
    await stream.append({ events: [{ type: "demo/a" }], stamp });
    await expectCode(stream.getEventsPacked({ limit: 10_001 }), "INVALID_ARGUMENT");
    await expectCode(stream.getEventsPacked({ types: ["demo/a"] }), "INVALID_ARGUMENT");
    await expectCode(stream.getEventsPacked({ format: 4 }), "INVALID_ARGUMENT");
    await expectCode(stream.getEventsPacked({ format: "2" }), "INVALID_ARGUMENT");
    await expectCode(stream.getEventsPacked({ afterOffset: -3 }), "INVALID_ARGUMENT");
    expect(unpackEvents(await stream.getEventsPacked({ limit: 10_000 }))).toHaveLength(1);
  });
});

const subscriptionRow = (projectId: string, i: number) => ({
  type: SUBSCRIPTION_CONFIGURED,
  payload: { key: `k${i}`, subscription: { type: "processor", binding: "TEST_PROCESSORS", host: `${projectId}:/idle-host-${i}`, processor: "tally" } },
});

describe("object limits", () => {
  test("LIVE_SUBSCRIBERS_MAX bounds live subscribers; replacing a key does not count twice", async () => {
    const stream = freshStream();
    for (let i = 0; i < LIMITS.LIVE_SUBSCRIBERS_MAX; i++) await stream.subscribe({ key: `s${i}`, callback: () => undefined });
    await expectCode(stream.subscribe({ key: "one-too-many", callback: () => undefined }), "INVALID_ARGUMENT");
    await stream.subscribe({ key: "s0", callback: () => undefined });
    expect((await stream.info()).liveSubscribers).toBe(LIMITS.LIVE_SUBSCRIBERS_MAX);
  });

  test("SUBSCRIPTIONS_MAX bounds processor subscription rows", async () => {
    const projectId = freshName().split(":")[0] as string;
    const stream = streamStub(env.STREAM, `${projectId}:/test`);
    const platform = { ...stamp, platform: "context" };
    await stream.append({ events: Array.from({ length: LIMITS.SUBSCRIPTIONS_MAX }, (_, i) => subscriptionRow(projectId, i)), stamp: platform });
    await expectCode(stream.append({ events: [subscriptionRow(projectId, LIMITS.SUBSCRIPTIONS_MAX)], stamp: platform }), "INVALID_ARGUMENT");
    expect(await stream.head()).toBe(LIMITS.SUBSCRIPTIONS_MAX);
  });

  test("bad subscribe input is INVALID_ARGUMENT", async () => {
    const stream = freshStream();
    await expectCode(stream.subscribe({ afterOffset: -1, callback: () => undefined }), "INVALID_ARGUMENT");
    await expectCode(stream.subscribe({ key: "", callback: () => undefined }), "INVALID_ARGUMENT");
    await expectCode(stream.subscribe({ key: "k".repeat(257), callback: () => undefined }), "INVALID_ARGUMENT");
  });
});

const enqueued = (script: string) => ({ type: RUN_REQUESTED, payload: { script, enqueued: true } });
const runSettled = (requestOffset: number) => ({ type: RUN_SETTLED, payload: { requestOffset, status: "succeeded" } });

describe("open enqueued runs", () => {
  const host = { platform: "capability-host" };

  test("RUNS_OPEN_MAX: the append that would open one run too many is RESOURCE_EXHAUSTED and writes nothing; the platform keeps a reserve; settled runs make room", async () => {
    const stream = freshStream();
    const writersMax = LIMITS.RUNS_OPEN_MAX - LIMITS.RUNS_OPEN_PLATFORM_RESERVE;
    const opened = await stream.append({ events: Array.from({ length: writersMax }, (_, i) => enqueued(`async () => ${i}`)), stamp });
    // Runs the caller runs inline (no `enqueued`) wait in no checkpoint and are not counted.
    await stream.append({ events: [{ type: RUN_REQUESTED, payload: { script: "async () => 'inline'" } }], stamp });
    const head = await stream.head();
    const refused = await expectCode(stream.append({ events: [{ type: "demo/n" }, enqueued("async () => 'one more'")], stamp }), "RESOURCE_EXHAUSTED");
    expect(refused.details).toMatchObject({ limit: "RUNS_OPEN_MAX" });
    expect(await stream.head()).toBe(head);
    // The platform (an agent enqueuing its reply's script) still has its reserve, and no more.
    const agent = { principal: "tester", origin: "/test", platform: "processor-host:agent" };
    await stream.append({ events: Array.from({ length: LIMITS.RUNS_OPEN_PLATFORM_RESERVE }, (_, i) => enqueued(`async () => "agent ${i}"`)), stamp: agent });
    const full = await expectCode(stream.append({ events: [enqueued("async () => 'agent, one more'")], stamp: agent }), "RESOURCE_EXHAUSTED");
    expect(full.details).toMatchObject({ limit: "RUNS_OPEN_MAX" });
    await stream.append({ events: [runSettled(opened[0]?.offset as number), runSettled(opened[1]?.offset as number), runSettled(opened[2]?.offset as number), runSettled(opened[3]?.offset as number), runSettled(opened[4]?.offset as number)], stamp: host });
    await stream.append({ events: [enqueued("async () => 'room'")], stamp });
  });

  test("RUNS_OPEN_MAX_BYTES: scripts waiting add up by their bytes as JSON; the count survives a new incarnation", async () => {
    const name = freshName();
    // 33,000 control characters: 198,000 bytes as JSON (an event holds at most 256 KiB of it), so two pass the limit.
    const heavy = "\u0001".repeat(33_000);
    expect(2 * 6 * heavy.length).toBeGreaterThan(LIMITS.RUNS_OPEN_MAX_BYTES);
    const [first] = await streamStub(env.STREAM, name).append({ events: [enqueued(`async () => "${heavy}"`)], stamp });
    await runInDurableObject(env.STREAM.getByName(name), (_instance, state) => state.abort("test: a new incarnation")).catch(() => undefined);
    const stream = streamStub(env.STREAM, name);
    const refused = await expectCode(stream.append({ events: [enqueued(`async () => "${heavy}"`)], stamp }), "RESOURCE_EXHAUSTED");
    expect(refused.details).toMatchObject({ limit: "RUNS_OPEN_MAX_BYTES" });
    await stream.append({ events: [runSettled(first?.offset as number)], stamp: host });
    await stream.append({ events: [enqueued(`async () => "${heavy}"`)], stamp });
  });
});

describe("the core checkpoint", () => {
  test("is not written for runs opening and closing (rolled forward from the log at start), and is for a subscription", async () => {
    const name = freshName();
    const stream = streamStub(env.STREAM, name);
    const [opened] = await stream.append({ events: [enqueued("async () => 1")], stamp });
    await stream.append({ events: [runSettled(opened?.offset as number)], stamp: { platform: "capability-host" } });
    const rows = () =>
      runInDurableObject(env.STREAM.getByName(name), (_instance, state) => state.storage.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'core-checkpoint'").toArray().length);
    expect(await rows()).toBe(0);
    await stream.append({ events: [enqueued("async () => 2")], stamp });
    // A new incarnation folds the open run again from the log.
    await runInDurableObject(env.STREAM.getByName(name), (_instance, state) => state.abort("test: a new incarnation")).catch(() => undefined);
    const again = streamStub(env.STREAM, name);
    const writersMax = LIMITS.RUNS_OPEN_MAX - LIMITS.RUNS_OPEN_PLATFORM_RESERVE;
    await again.append({ events: Array.from({ length: writersMax - 1 }, (_, i) => enqueued(`async () => ${i}`)), stamp });
    await expectCode(again.append({ events: [enqueued("async () => 'past'")], stamp }), "RESOURCE_EXHAUSTED");
  });

  test("moves on with the head even when nothing changes the core, so a start replays a bounded stretch", async () => {
    const name = freshName();
    const stream = streamStub(env.STREAM, name);
    // Inline runs are core types that change nothing: before, the checkpoint stayed at 0 behind all of them.
    for (let batch = 0; batch < 10; batch++) {
      await stream.append({ events: Array.from({ length: 500 }, (_, i) => ({ type: RUN_REQUESTED, payload: { script: `async () => ${batch * 500 + i}` } })), stamp });
    }
    const saved = await runInDurableObject(env.STREAM.getByName(name), (_instance, state) =>
      JSON.parse(state.storage.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'core-checkpoint'").one().value) as { offset: number },
    );
    expect(saved.offset).toBeGreaterThanOrEqual(4_000);
    expect(await stream.head()).toBe(5_000);
  });
});
