import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import type { StreamEvent } from "iterate/types";
import { LIMITS } from "../limits.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { SUBSCRIPTION_CONFIGURED } from "../stream/stream-core.ts";
import { MESSAGE_APPENDED, eventsOfBody } from "./message-mapping.ts";
import type { ProtocolAnswer, ProtocolRequest } from "./protocol-api.ts";
import { StreamProtocol } from "./stream-protocol.ts";

let counter = 0;
function fresh(): string {
  counter += 1;
  return `prj_dshttp${Date.now()}${counter}:/tallies`;
}
const stamp = { principal: "http-writer", origin: "/" };
const json = (text: string, creating = false) => eventsOfBody(new TextEncoder().encode(text), "application/json", creating);
type Answer = { ok: true; value: ProtocolAnswer } | { ok: false; error: { code: string } };
const http = (name: string, request: ProtocolRequest) =>
  (env.STREAM.getByName(name) as unknown as { http(request: ProtocolRequest): Promise<Answer> }).http(request);
const subscribe = (host: string) => ({
  type: SUBSCRIPTION_CONFIGURED,
  payload: { key: "tally", subscription: { type: "processor", binding: "TEST_PROCESSORS", host, processor: "tally" } },
});

describe("the Durable Streams protocol inside the Stream Durable Object", () => {
  test("HTTP appends are ordinary stamped events: Cap'n Web readers and hosted processors get them", async () => {
    const name = fresh();
    const stream = streamStub(env.STREAM, name);
    const created = await http(name, { op: "create", contentType: "application/json", closed: false, body: json("[]", true), stamp });
    expect(created).toMatchObject({ ok: true, value: { status: 201 } });
    await stream.append({ events: [subscribe(name)], stamp: { principal: "tester", platform: "context" } });
    const appended = await http(name, { op: "append", contentType: "application/json", close: false, body: json(`[{"n":1},{"n":2}]`), stamp });
    expect(appended).toMatchObject({ ok: true, value: { status: 204, headers: { "Stream-Next-Offset": "0000000000000003_0000000000000000" } } });
    const events: StreamEvent[] = await stream.getEvents({ afterOffset: 1 });
    expect(events.map((event) => [event.type, event.payload, event.source])).toEqual([
      [MESSAGE_APPENDED, { n: 1 }, stamp],
      [MESSAGE_APPENDED, { n: 2 }, stamp],
    ]);
    const host = env.TEST_PROCESSORS.getByName(name) as unknown as { snapshot(): Promise<{ offset: number }> };
    await expect.poll(async () => (await host.snapshot()).offset, { timeout: 5000 }).toBe(3);
  });

  test("a stream that feeds a processor cannot be deleted over the protocol, and nothing is lost", async () => {
    const name = fresh();
    const stream = streamStub(env.STREAM, name);
    await http(name, { op: "create", contentType: "application/json", closed: false, body: json("[1]", true), stamp });
    await stream.append({ events: [subscribe(name)], stamp: { principal: "tester", platform: "context" } });
    expect(await http(name, { op: "delete" })).toMatchObject({ ok: false, error: { code: "PERMISSION_DENIED" } });
    expect(await stream.head()).toBe(2);
  });

  test("a stream a PUT created before the platform wrote to it (a secret's audit) cannot be deleted once it holds a platform fact", async () => {
    const name = fresh();
    const stream = streamStub(env.STREAM, name);
    // Created over HTTP first: a later secret at this path writes its audit here.
    await http(name, { op: "create", contentType: "application/json", closed: false, body: json("[1]", true), stamp });
    const audit = { type: "events.iterate.com/secret/used", payload: { path: "/tallies", version: 1, url: "https://api.example.com/v1" } };
    await stream.append({ events: [audit], stamp: { principal: "someone", origin: "/", platform: "secret" } });
    expect(await http(name, { op: "delete" })).toMatchObject({ ok: false, error: { code: "PERMISSION_DENIED" } });
    expect(await stream.head()).toBe(2);
    expect((await stream.getEvents({ afterOffset: 1 }))[0]).toMatchObject({ type: audit.type, source: { platform: "secret" } });
  });

  test("a stream a PUT gave a TTL outlives it once a processor reads it: HTTP keeps serving it instead of failing every request", async () => {
    const name = fresh();
    const stream = streamStub(env.STREAM, name);
    await http(name, { op: "create", contentType: "application/json", closed: false, ttlSeconds: 1, body: json("[1]", true), stamp });
    await stream.append({ events: [subscribe(name)], stamp: { principal: "tester", platform: "context" } });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await http(name, { op: "head" })).toMatchObject({ ok: true, value: { status: 200 } });
    expect(await http(name, { op: "read", from: { after: 0 }, offsetParam: "-1", waitMs: 0 })).toMatchObject({ ok: true, value: { status: 200 } });
    expect(await stream.head()).toBe(2);
  });

  test("a refused append (an event over the size limit) changes neither the journal nor producer state", async () => {
    const name = fresh();
    await http(name, { op: "create", contentType: "application/json", closed: false, body: json("[]", true), stamp });
    const producer = { id: "p", epoch: 0, seq: 0 };
    const huge = json(JSON.stringify("x".repeat(300_000)));
    expect(await http(name, { op: "append", contentType: "application/json", close: false, body: huge, producer, stamp })).toMatchObject({
      ok: false,
      error: { code: "INVALID_ARGUMENT" },
    });
    // The same producer tuple is still new: seq 0 is accepted, not a duplicate.
    expect(await http(name, { op: "append", contentType: "application/json", close: false, body: json("1"), producer, stamp })).toMatchObject({
      ok: true,
      value: { status: 200 },
    });
    expect(await streamStub(env.STREAM, name).head()).toBe(1);
  });

  test("a JSON append body the Worker only decoded is parsed here: messages stored as sent; bad JSON or a deep one is a 400 that writes nothing", async () => {
    const name = fresh();
    const stream = streamStub(env.STREAM, name);
    await http(name, { op: "create", contentType: "application/json", closed: false, body: json("[]", true), stamp });
    const appended = await http(name, { op: "append", contentType: "application/json", close: false, body: { json: `[{"n":1},"two",null]` }, stamp });
    expect(appended).toMatchObject({ ok: true, value: { status: 204, headers: { "Stream-Next-Offset": "0000000000000003_0000000000000000" } } });
    const events: StreamEvent[] = await stream.getEvents({ afterOffset: 0 });
    expect(events.map((event) => [event.type, event.payload, event.source])).toEqual([
      [MESSAGE_APPENDED, { n: 1 }, stamp],
      [MESSAGE_APPENDED, "two", stamp],
      [MESSAGE_APPENDED, null, stamp],
    ]);
    for (const bad of ["{", "[]", `[${"[".repeat(40)}${"]".repeat(40)}]`]) {
      expect(await http(name, { op: "append", contentType: "application/json", close: false, body: { json: bad }, stamp }), bad).toMatchObject({ ok: true, value: { status: 400 } });
    }
    // Messages JSON cannot keep faithfully are refused whole, though the text parses (the route answers 400).
    for (const bad of [`[{"n":3},{"a":"\\udc00"}]`, `[{"n":3},1e400]`, `[{"n":3},-${"9".repeat(400)}]`]) {
      expect(await http(name, { op: "append", contentType: "application/json", close: false, body: { json: bad }, stamp }), bad).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENT" } });
    }
    expect(await stream.head()).toBe(3);
  });

  test("a body of several appends (over APPEND_MAX_EVENTS messages) is one commit: all stored in order, or, when a later one is refused, none and nobody told", async () => {
    const name = fresh();
    const stream = streamStub(env.STREAM, name);
    await http(name, { op: "create", contentType: "application/json", closed: false, body: json("[]", true), stamp });
    // A waiter for the first message: it must not hear of a write that is then undone.
    const waited = Promise.resolve(stream.waitForEvent({ type: MESSAGE_APPENDED, timeoutMs: 1_500 })).then(
      (event: StreamEvent) => event.offset,
      () => "timed out",
    );
    const refused = [...Array.from({ length: 500 }, (_, i) => i), "x".repeat(300_000)];
    expect(await http(name, { op: "append", contentType: "application/json", close: false, body: { json: JSON.stringify(refused) }, stamp })).toMatchObject({
      ok: false,
      error: { code: "INVALID_ARGUMENT" },
    });
    expect(await stream.head()).toBe(0);
    expect(await stream.getEvents({ afterOffset: 0 })).toEqual([]);
    expect(await waited).toBe("timed out");
    // The head did not move: the next message is offset 1, and offsets stay gapless.
    const next = await http(name, { op: "append", contentType: "application/json", close: false, body: { json: JSON.stringify(Array.from({ length: 600 }, (_, i) => i)) }, stamp });
    expect(next).toMatchObject({ ok: true, value: { status: 204, headers: { "Stream-Next-Offset": "0000000000000600_0000000000000000" } } });
    const stored: StreamEvent[] = await stream.getEvents({ afterOffset: 0, limit: 500 });
    expect(stored.map((event) => event.offset)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    expect(stored.map((event) => event.payload)).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  test("a fork copies at most STREAMS_HTTP_FORK_MAX_BYTES of events: a larger one is a 400 that takes no reference on its source", async () => {
    const name = fresh();
    await http(name, { op: "create", contentType: "application/json", closed: false, body: json("[]", true), stamp });
    // Messages of 200,000 characters, four to an append, until the stream holds more than the limit.
    const message = JSON.stringify("x".repeat(200_000));
    for (let bytes = 0; bytes <= LIMITS.STREAMS_HTTP_FORK_MAX_BYTES; bytes += 4 * message.length) {
      await http(name, { op: "append", contentType: "application/json", close: false, body: { json: `[${message},${message},${message},${message}]` }, stamp });
    }
    const refused = await http(name, { op: "fork-source" });
    expect(refused).toMatchObject({ ok: true, value: { status: 400, body: expect.stringContaining("STREAMS_HTTP_FORK_MAX_BYTES") } });
    // Up to an offset within the limit the same source forks.
    const within = await http(name, { op: "fork-source", offset: 4 });
    expect(within).toMatchObject({ ok: true, value: { status: 200 } });
    await http(name, { op: "release" });
    // No reference was left behind: the source is erased at once, not kept "gone" for a fork that never was.
    expect(await http(name, { op: "delete" })).toMatchObject({ ok: true, value: { status: 204 } });
    expect(await http(name, { op: "create", contentType: "application/json", closed: false, body: json("[]", true), stamp })).toMatchObject({ ok: true, value: { status: 201 } });
  });

  test("a fork's sub-offset counts against STREAMS_HTTP_FORK_MAX_EVENTS: messages past the offset are copied too", async () => {
    const name = fresh();
    const max = LIMITS.STREAMS_HTTP_FORK_MAX_EVENTS;
    await http(name, { op: "create", contentType: "application/json", closed: false, body: json("[]", true), stamp });
    const batch = LIMITS.STREAMS_HTTP_BODY_MAX_MESSAGES;
    for (let start = 0; start <= max; start += batch) {
      const messages = Array.from({ length: Math.min(batch, max + 1 - start) }, (_, i) => start + i);
      await http(name, { op: "append", contentType: "application/json", close: false, body: { json: JSON.stringify(messages) }, stamp });
    }
    expect(await streamStub(env.STREAM, name).head()).toBe(max + 1);
    for (const [offset, subOffset] of [[0, max + 1], [max - 10, 11], [0, 10 * max]]) {
      const refused = await http(name, { op: "fork-source", offset, subOffset });
      expect(refused, `${offset} + ${subOffset}`).toMatchObject({ ok: true, value: { status: 400, body: expect.stringContaining("STREAMS_HTTP_FORK_MAX_EVENTS") } });
    }
    expect(await http(name, { op: "fork-source", offset: max - 10, subOffset: 10 })).toMatchObject({ ok: true, value: { status: 200 } });
  });

  test("a stream keeps at most STREAMS_HTTP_LIVE_WAITERS_MAX live readers waiting: one more is a 503 with Retry-After, and the waiting ones still wake", async () => {
    const name = fresh();
    const max = LIMITS.STREAMS_HTTP_LIVE_WAITERS_MAX;
    await http(name, { op: "create", contentType: "application/json", closed: false, body: json("[]", true), stamp });
    const wait = { op: "read", from: { after: 0 }, offsetParam: "-1", live: "long-poll", waitMs: 10_000 } as const;
    const waiting = Array.from({ length: max }, () => http(name, wait));
    // Each wait has reached the stream once a later request is answered: the object serves requests in order.
    await http(name, { op: "head" });
    const refused = await http(name, wait);
    expect(refused).toMatchObject({ ok: true, value: { status: 503, headers: { "retry-after": "1" }, body: expect.stringContaining("STREAMS_HTTP_LIVE_WAITERS_MAX") } });
    // An SSE stream's first step does not wait: it still learns where it stands.
    const first = await http(name, { op: "read", from: { after: 0 }, offsetParam: "-1", live: "sse", waitMs: 0 });
    expect(first).toMatchObject({ ok: true, value: { status: 200, sse: { last: 0, upToDate: true, count: 0 } } });
    await http(name, { op: "append", contentType: "application/json", close: false, body: { json: "1" }, stamp });
    const woken = await Promise.all(waiting);
    expect(woken.map((answer) => (answer.ok ? answer.value.status : answer.error.code))).toEqual(Array.from({ length: max }, () => 200));
    // Once they have been answered there is room again.
    const again = http(name, { ...wait, from: { after: 1 }, waitMs: 100 });
    expect(await again).toMatchObject({ ok: true, value: { status: 204 } });
  });

  test("a stream no PUT created (a context's) cannot be closed over the protocol: 403, nothing written; one closed before reads as open again", async () => {
    const name = fresh();
    const stream = streamStub(env.STREAM, name);
    await stream.append({ events: [{ type: "demo/context-fact" }], stamp: { principal: "tester", platform: "context" } });
    const producer = { id: "p", epoch: 0, seq: 0 };
    for (const body of [undefined, { json: "1" }]) {
      const closing = await http(name, { op: "append", close: true, ...(body ? { contentType: "application/json", body } : {}), producer, stamp });
      expect(closing).toMatchObject({ ok: true, value: { status: 403 } });
    }
    expect(await stream.head()).toBe(1);
    const head = await http(name, { op: "head" });
    expect(head.ok && head.value.headers["Stream-Closed"]).toBeUndefined();
    // The producer's seq 0 was not taken by the refused writes, and appends go on.
    expect(await http(name, { op: "append", contentType: "application/json", close: false, body: { json: "2" }, producer, stamp })).toMatchObject({ ok: true, value: { status: 200 } });
    // A context stream an earlier OS let an HTTP caller close reads as open when its object next loads.
    const reloaded = await runInDurableObject(env.STREAM.getByName(name), (_instance, state) => {
      state.storage.sql.exec("UPDATE http_meta SET value = json_set(value, '$.closed', json('true'))");
      const host = { sql: state.storage.sql, path: "/tallies", head: () => 2, append: () => undefined, clear: () => undefined, erasable: () => true };
      return new StreamProtocol(host).handle({ op: "head" });
    });
    expect(reloaded.status).toBe(200);
    expect(reloaded.headers["Stream-Closed"]).toBeUndefined();
  });
});
