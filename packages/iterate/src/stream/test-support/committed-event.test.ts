import { describe, expect, it } from "vitest";
import { TEST_EPOCH, committedEvent, committedEvents } from "./committed-event.ts";

describe("committedEvent", () => {
  it("fills in everything a partial event leaves out", () => {
    expect(committedEvent({ type: "demo/ping" })).toEqual({
      streamPath: "/",
      offset: 1,
      type: "demo/ping",
      payload: {},
      createdAt: TEST_EPOCH,
      source: {},
    });
  });

  it("keeps what the partial event says, and the offset argument wins", () => {
    const partial = { type: "demo/ping", payload: { n: 1 }, offset: 3, idempotencyKey: "k", source: { processor: "p" }, streamPath: "/a" };
    expect(committedEvent(partial, 9)).toEqual({
      streamPath: "/a",
      offset: 9,
      type: "demo/ping",
      payload: { n: 1 },
      createdAt: TEST_EPOCH,
      source: { processor: "p" },
      idempotencyKey: "k",
    });
  });
});

describe("committedEvents", () => {
  it("numbers durable events like a stream and gives ephemeral ones the head they follow", () => {
    const events = committedEvents([
      { type: "demo/a" },
      { type: "demo/poke", ephemeral: true },
      { type: "demo/b" },
      { type: "demo/c", offset: 10 },
      { type: "demo/d" },
    ]);
    expect(events.map((event) => [event.type, event.offset, event.ephemeral ?? false])).toEqual([
      ["demo/a", 1, false],
      ["demo/poke", 1, true],
      ["demo/b", 2, false],
      ["demo/c", 10, false],
      ["demo/d", 11, false],
    ]);
  });
});
