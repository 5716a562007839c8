import { describe, expect, it } from "vitest";
import { processEventOnce, reduceProcessor } from "../../test-support/index.ts";
import { COUNTER_EVENTS } from "./contract.ts";
import { Counter } from "./processor.ts";

const inc = (by: number) => ({ type: COUNTER_EVENTS.incremented, payload: { by } });

describe("Counter: events through reduceProcessor", () => {
  it.each([
    ["no events", [], { count: 0, increments: 0 }],
    ["increments add up", [inc(2), inc(3)], { count: 5, increments: 2 }],
    ["a reset clears the count but not the tally", [inc(4), { type: COUNTER_EVENTS.reset }, inc(1)], { count: 1, increments: 2 }],
    ["an ephemeral increment is not folded", [inc(1), { ...inc(5), ephemeral: true }], { count: 1, increments: 1 }],
    ["an invalid payload is skipped", [inc(1), inc(-3), { type: COUNTER_EVENTS.incremented, payload: { by: "2" } }], { count: 1, increments: 1 }],
    ["a foreign type is ignored", [inc(1), { type: "demo/ping" }], { count: 1, increments: 1 }],
    ["an emitted milestone is not consumed", [inc(10), { type: COUNTER_EVENTS.milestoneReached, payload: { count: 10 } }], { count: 10, increments: 1 }],
  ])("%s", (_name, events, expected) => {
    expect(reduceProcessor(new Counter(), events)).toEqual(expected);
  });

  it("re-reducing the same events gives the same state", () => {
    const events = [inc(3), { type: COUNTER_EVENTS.reset }, inc(9), inc(4)];
    expect(reduceProcessor(new Counter(), events)).toEqual(reduceProcessor(new Counter(), events));
  });
});

describe("Counter: states through processEvent", () => {
  it.each([
    ["crossing 10 lands a milestone", { count: 8, increments: 1 }, { count: 11, increments: 2 }, [{ count: 10 }]],
    ["crossing 20 from 19 lands 20", { count: 19, increments: 4 }, { count: 20, increments: 5 }, [{ count: 20 }]],
    ["staying under 10 lands nothing", { count: 2, increments: 1 }, { count: 9, increments: 2 }, []],
    ["staying between milestones lands nothing", { count: 11, increments: 2 }, { count: 15, increments: 3 }, []],
  ])("%s", async (_name, previousState, state, milestones) => {
    const record = await processEventOnce(new Counter(), { event: { ...inc(state.count - previousState.count), offset: 7 }, previousState, state });
    expect(record.appended).toEqual(
      milestones.map((payload) => ({
        type: COUNTER_EVENTS.milestoneReached,
        payload,
        idempotencyKey: "counter/milestone-reached:7",
        source: { processor: "counter" },
      })),
    );
  });

  it("does nothing in the at-head pass", async () => {
    const record = await processEventOnce(new Counter(), { state: { count: 10, increments: 1 } });
    expect(record.appended).toEqual([]);
    expect(record.background).toEqual([]);
  });
});
