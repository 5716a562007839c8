import { describe, expect, it } from "vitest";
import { errorCode } from "../../errors/index.ts";
import type { StreamEvent } from "../../types.ts";
import { memoryStream } from "./memory-stream.ts";

async function failure(promise: Promise<unknown>): Promise<{ code: unknown; details: unknown }> {
  try {
    await promise;
  } catch (error) {
    return { code: errorCode(error), details: (error as { details?: unknown }).details };
  }
  throw new Error("expected a rejection");
}

describe("memoryStream append", () => {
  it("numbers durable events from 1, stamps them, and keeps only source.processor from the writer", async () => {
    const stream = memoryStream({ path: "/agents/a", source: { origin: "/agents/b" }, now: () => 0 });
    const [first, second] = await stream.append(
      { type: "demo/ping", source: { processor: "greeter", origin: "/forged", platform: "forged" } },
      { type: "demo/pong", payload: { n: 1 } },
    );
    expect(first).toEqual({
      streamPath: "/agents/a",
      offset: 1,
      type: "demo/ping",
      payload: {},
      createdAt: "1970-01-01T00:00:00.000Z",
      source: { origin: "/agents/b", processor: "greeter" },
    });
    expect(second).toMatchObject({ offset: 2, payload: { n: 1 }, source: { origin: "/agents/b" } });
    expect(await stream.head()).toBe(2);
  });

  it("answers the stored event for a repeated key and body, and appends nothing", async () => {
    const stream = memoryStream();
    const [stored] = await stream.append({ type: "demo/ping", payload: { a: 1 }, idempotencyKey: "k" });
    const [again] = await stream.append({ type: "demo/ping", payload: { a: 1, b: undefined }, idempotencyKey: "k" });
    expect(again).toBe(stored);
    expect(stream.events).toHaveLength(1);
  });

  it("lands a key repeated inside one batch once", async () => {
    const stream = memoryStream();
    const events = await stream.append({ type: "demo/ping", idempotencyKey: "k" }, { type: "demo/ping", idempotencyKey: "k" });
    expect(events.map((event) => event.offset)).toEqual([1, 1]);
    expect(stream.events).toHaveLength(1);
  });

  it.each([
    ["a different payload", { type: "demo/ping", payload: { a: 2 }, idempotencyKey: "k" }],
    ["a different type", { type: "demo/pong", payload: { a: 1 }, idempotencyKey: "k" }],
  ])("refuses a reused key with %s as IDEMPOTENCY_CONFLICT, appending nothing from the batch", async (_name, input) => {
    const stream = memoryStream();
    await stream.append({ type: "demo/ping", payload: { a: 1 }, idempotencyKey: "k" });
    const result = await failure(stream.append({ type: "demo/new" }, input));
    expect(result).toEqual({ code: "IDEMPOTENCY_CONFLICT", details: { index: 1, idempotencyKey: "k" } });
    expect(stream.events).toHaveLength(1);
  });

  it("checks expectedOffset against the head", async () => {
    const stream = memoryStream();
    await stream.appendWith({ expectedOffset: 0 }, { type: "demo/a" });
    expect(await failure(stream.appendWith({ expectedOffset: 0 }, { type: "demo/b" }))).toEqual({
      code: "OFFSET_CONFLICT",
      details: { expectedOffset: 0, head: 1 },
    });
    await stream.appendWith({ expectedOffset: 1 }, { type: "demo/b" });
    expect(stream.events.map((event) => event.type)).toEqual(["demo/a", "demo/b"]);
  });

  it("lets an idempotent retry with a stale expectedOffset answer the stored events", async () => {
    const stream = memoryStream();
    const [stored] = await stream.appendWith({ expectedOffset: 0 }, { type: "demo/a", idempotencyKey: "once" });
    const [again] = await stream.appendWith({ expectedOffset: 0 }, { type: "demo/a", idempotencyKey: "once" });
    expect(again).toBe(stored);
  });

  it("passes ephemeral events to subscribers with the head's offset, and never stores them", async () => {
    const stream = memoryStream();
    const seen: StreamEvent[][] = [];
    const unsubscribe = stream.subscribe((events) => seen.push(events));
    await stream.append({ type: "demo/a" });
    await stream.append({ type: "demo/poke", ephemeral: true }, { type: "demo/b" });
    unsubscribe();
    await stream.append({ type: "demo/c" });

    expect(seen.map((batch) => batch.map((event) => [event.type, event.offset, event.ephemeral ?? false]))).toEqual([
      [["demo/a", 1, false]],
      [
        ["demo/poke", 1, true],
        ["demo/b", 2, false],
      ],
    ]);
    expect(stream.events.map((event) => event.type)).toEqual(["demo/a", "demo/b", "demo/c"]);
  });

  it("freezes what it stores", async () => {
    const stream = memoryStream();
    const [event] = await stream.append({ type: "demo/a", payload: { list: [1] } });
    const payload = event?.payload as { list: number[] };
    expect(() => payload.list.push(2)).toThrow(TypeError);
  });

  it.each([
    ["no events", []],
    ["an unknown field", [{ type: "demo/a", extra: true }]],
    ["a bad type", [{ type: "Demo A" }]],
    ["an oversized payload", [{ type: "demo/a", payload: "x".repeat(300_000) }]],
    ["a payload too deep", [{ type: "demo/a", payload: JSON.parse("[".repeat(40) + "]".repeat(40)) as unknown }]],
    ["too many events", Array.from({ length: 501 }, () => ({ type: "demo/a" }))],
    ["one bad event among good ones", [{ type: "demo/a" }, { type: "demo/b", payload: { f: Number.NaN } }]],
  ])("refuses %s with INVALID_ARGUMENT and changes nothing", async (_name, inputs) => {
    const stream = memoryStream();
    await stream.append({ type: "demo/first" });
    const seen: unknown[] = [];
    stream.subscribe((events) => seen.push(events));
    const result = await failure(stream.append(...(inputs as never[])));
    expect(result.code).toBe("INVALID_ARGUMENT");
    expect(stream.events).toHaveLength(1);
    expect(seen).toEqual([]);
  });

  it.each([
    ["a negative expectedOffset", { expectedOffset: -1 }],
    ["a fractional expectedOffset", { expectedOffset: 0.5 }],
    ["an unknown option", { expected: 0 }],
  ])("refuses %s with INVALID_ARGUMENT", async (_name, options) => {
    const stream = memoryStream();
    expect((await failure(stream.appendWith(options as never, { type: "demo/a" }))).code).toBe("INVALID_ARGUMENT");
    expect(stream.events).toHaveLength(0);
  });
});

async function filled() {
  const stream = memoryStream();
  await stream.append({ type: "demo/a" }, { type: "demo/b" }, { type: "demo/a" }, { type: "demo/c" }, { type: "demo/a" });
  return stream;
}

describe("memoryStream reads", () => {

  it.each([
    [undefined, [1, 2, 3, 4, 5]],
    [{ afterOffset: 2 }, [3, 4, 5]],
    [{ afterOffset: 1, beforeOffset: 4 }, [2, 3]],
    [{ types: ["demo/a"] }, [1, 3, 5]],
    [{ types: ["demo/a"], limit: 2 }, [1, 3]],
    [{ afterOffset: 9 }, []],
  ])("getEvents(%j)", async (input, offsets) => {
    const stream = await filled();
    expect((await stream.getEvents(input)).map((event) => event.offset)).toEqual(offsets);
  });

  it.each([{ afterOffset: -1 }, { limit: 0 }, { limit: 501 }, { from: 1 }, { afterOffset: 1.5 }])(
    "refuses getEvents(%j) with INVALID_ARGUMENT",
    async (input) => {
      const stream = await filled();
      expect((await failure(stream.getEvents(input))).code).toBe("INVALID_ARGUMENT");
    },
  );

  it("reads pages for the engine", async () => {
    const stream = await filled();
    expect((await stream.read({ afterOffset: 1, limit: 2 })).map((event) => event.offset)).toEqual([2, 3]);
    expect((await failure(stream.read({ afterOffset: -3, limit: 2 }))).code).toBe("INVALID_ARGUMENT");
  });
});

describe("memoryStream waitForEvent", () => {
  it("answers a matching event already in the log", async () => {
    const stream = memoryStream();
    await stream.append({ type: "demo/settled", payload: { requestOffset: 1, status: "failed" } });
    await stream.append({ type: "demo/settled", payload: { requestOffset: 2, status: "succeeded", extra: true } });
    const found = await stream.waitForEvent({ type: "demo/settled", payload: { requestOffset: 2 }, timeoutMs: 10 });
    expect(found.offset).toBe(2);
  });

  it("waits for a matching event after afterOffset", async () => {
    const stream = memoryStream();
    await stream.append({ type: "demo/done" });
    const waiting = stream.waitForEvent({ type: "demo/done", afterOffset: 1, timeoutMs: 1_000 });
    await stream.append({ type: "demo/other" }, { type: "demo/done", payload: { n: 2 } });
    expect(await waiting).toMatchObject({ offset: 3, payload: { n: 2 } });
  });

  it("fails with TIMEOUT when nothing matches in time", async () => {
    const stream = memoryStream();
    await stream.append({ type: "demo/done", payload: { requestOffset: 1 } });
    const result = await failure(stream.waitForEvent({ type: "demo/done", payload: { requestOffset: 2 }, timeoutMs: 5 }));
    expect(result).toEqual({ code: "TIMEOUT", details: { timeoutMs: 5 } });
  });

  it.each([{}, { timeoutMs: 300_001 }, { timeoutMs: 5, afterOffset: -1 }, { timeoutMs: 5, payload: "x" }])(
    "refuses waitForEvent(%j) with INVALID_ARGUMENT",
    async (input) => {
      expect((await failure(memoryStream().waitForEvent(input))).code).toBe("INVALID_ARGUMENT");
    },
  );
});
