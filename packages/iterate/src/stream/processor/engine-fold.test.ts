import { describe, expect, it } from "vitest";
import { errorCode } from "../../errors/index.ts";
import type { StreamEvent } from "../../types.ts";
import { COUNTER_EVENTS, CounterContract } from "../examples/counter/contract.ts";
import { Counter } from "../examples/counter/processor.ts";
import { connectEngine, fakeClock, memoryStorage, memoryStream, settle } from "../test-support/index.ts";
import { RECENT_SKIPS_MAX, SKIP_ISSUES_MAX, SKIP_ISSUE_MAX_LENGTH, advanceCheckpoint, emptyCheckpoint } from "./checkpoint.ts";
import { ProcessorEngine, type ProcessorEngineOptions } from "./engine.ts";
import type { SkipReport } from "./processor-runner.ts";
import type { ProcessEventArgs } from "./stream-processor.ts";

type CounterArgs = ProcessEventArgs<Counter["contract"]>;

interface Call {
  offset: number | null;
  ephemeral: boolean;
  count: number;
  previousCount: number;
  caughtUp: boolean;
}

/** The counter, recording every processEvent call and failing on demand. */
class RecordingCounter extends Counter {
  readonly calls: Call[] = [];
  /** Offsets whose processEvent throws, once each. */
  readonly failOnce = new Set<number>();
  block: ((args: CounterArgs) => Promise<unknown> | undefined) | undefined;

  override async processEvent(args: CounterArgs) {
    const { event, state, previousState, delivery } = args;
    this.calls.push({
      offset: event?.offset ?? null,
      ephemeral: event?.ephemeral === true,
      count: state.count,
      previousCount: previousState.count,
      caughtUp: delivery.caughtUp,
    });
    if (event !== null && this.failOnce.delete(event.offset)) throw new Error(`boom at ${event.offset}`);
    const blocker = this.block?.(args);
    if (blocker !== undefined) args.blockProcessorWhile(blocker);
    await super.processEvent(args);
  }
}

function setup(options: Partial<ProcessorEngineOptions> = {}) {
  const stream = memoryStream();
  const storage = memoryStorage();
  const counter = new RecordingCounter();
  const skips: SkipReport[] = [];
  const engine = new ProcessorEngine({
    stream,
    storage,
    processors: [counter],
    clock: fakeClock(),
    onSkip: (report) => skips.push(report),
    ...options,
  });
  return { stream, storage, counter, skips, engine };
}

const inc = (by: number) => ({ type: COUNTER_EVENTS.incremented, payload: { by } });

describe("ProcessorEngine folding", () => {
  it("folds each batch, commits once per batch, and makes one at-head pass per batch at head", async () => {
    const { stream, storage, counter, engine } = setup();
    const connection = connectEngine(stream, engine);
    await stream.append(inc(1), inc(2), inc(3));
    await settle(engine);
    await stream.append(inc(4));
    await settle(engine);

    expect(connection.failures()).toEqual([]);
    // Three batches: [1, 2, 3], [4], and [5], the milestone the counter appended at 4. The counter
    // does not consume milestones, so [5] moves its checkpoint in memory and writes nothing.
    expect(storage.checkpointWrites("counter")).toBe(2);
    expect(await engine.snapshot("counter")).toEqual({ offset: 5, state: { count: 10, increments: 4 }, version: "1.0.0", skipped: 0 });
    expect(counter.calls).toEqual([
      { offset: 1, ephemeral: false, count: 1, previousCount: 0, caughtUp: false },
      { offset: 2, ephemeral: false, count: 3, previousCount: 1, caughtUp: false },
      { offset: 3, ephemeral: false, count: 6, previousCount: 3, caughtUp: true },
      { offset: null, ephemeral: false, count: 6, previousCount: 6, caughtUp: true },
      { offset: 4, ephemeral: false, count: 10, previousCount: 6, caughtUp: true },
      // The milestone appended at 4 moved the head, so the pass waits for the batch that folds it.
      { offset: null, ephemeral: false, count: 10, previousCount: 10, caughtUp: true },
    ]);
    expect(stream.events.at(-1)).toMatchObject({
      offset: 5,
      type: COUNTER_EVENTS.milestoneReached,
      payload: { count: 10 },
      source: { processor: "counter" },
    });
  });

  it("folds redelivered events exactly once and commits nothing for them", async () => {
    const { stream, storage, counter, engine } = setup();
    connectEngine(stream, engine);
    await stream.append(inc(2), inc(5));
    await settle(engine);
    const writes = storage.checkpointWrites("counter");
    const calls = counter.calls.length;

    const outcomes = await engine.deliver(stream.events);
    expect(outcomes).toEqual([{ slug: "counter", status: "processed", offset: 2 }]);
    expect((await engine.snapshot("counter")).state).toEqual({ count: 7, increments: 2 });
    expect(storage.checkpointWrites("counter")).toBe(writes);
    expect(counter.calls).toHaveLength(calls);
  });

  it("takes the head a pushed batch carries instead of asking the stream, and asks when it is below the batch", async () => {
    const { stream, counter, engine } = setup();
    await stream.append(inc(1), inc(2), inc(3));
    const [first, second, third] = stream.events as StreamEvent[];
    let asked = 0;
    const head = stream.head.bind(stream);
    stream.head = async () => {
      asked += 1;
      return head();
    };
    // The pusher says the head was 3 when it read [1, 2]: 2 is not caught up, and no pass at head follows.
    await engine.deliver([first as StreamEvent, second as StreamEvent], { head: 3 });
    expect(asked).toBe(0);
    expect(counter.calls.map((call) => [call.offset, call.caughtUp])).toEqual([
      [1, false],
      [2, false],
    ]);
    // A head below the batch is no head: the stream is asked, and 3 is at its head.
    await engine.deliver([third as StreamEvent], { head: 1 });
    expect(asked).toBeGreaterThan(0);
    expect(counter.calls.map((call) => [call.offset, call.caughtUp]).slice(2)).toEqual([
      [3, true],
      [null, true],
    ]);
  });

  it("reads a hole before a pushed batch from the stream", async () => {
    const { stream, counter, engine } = setup();
    await stream.append(inc(1), inc(2), inc(3), inc(4));
    const [, , third, fourth] = stream.events as StreamEvent[];
    await engine.deliver([third as StreamEvent, fourth as StreamEvent]);
    expect(await engine.snapshot("counter")).toMatchObject({ offset: 4, state: { count: 10, increments: 4 } });
    expect(counter.calls.map((call) => call.offset)).toEqual([1, 2, 3, 4]);
  });

  it("skips a payload that fails its schema, visibly, and moves on", async () => {
    const { stream, storage, counter, skips, engine } = setup();
    connectEngine(stream, engine);
    await stream.append(inc(1), { type: COUNTER_EVENTS.incremented, payload: { by: -4 } }, inc(2));
    await settle(engine);

    const snapshot = await engine.snapshot("counter");
    expect(snapshot).toMatchObject({ offset: 3, state: { count: 3, increments: 2 }, skipped: 1 });
    const skip = { offset: 2, type: COUNTER_EVENTS.incremented, issues: [expect.stringMatching(/^by: /)] };
    expect(storage.checkpoint("counter")?.recentSkips).toEqual([skip]);
    expect(skips).toEqual([{ slug: "counter", ...skip }]);
    expect(counter.calls.map((call) => call.offset)).toEqual([1, 3, null]);
  });

  it("keeps a skip's issues bounded (SKIP_ISSUES_MAX, SKIP_ISSUE_MAX_LENGTH): a payload chooses how long its schema's messages are", () => {
    const start = emptyCheckpoint(CounterContract);
    const event = { offset: 1, type: COUNTER_EVENTS.incremented, payload: {}, createdAt: "", source: {}, streamPath: "/c" } as StreamEvent;
    const issues = Array.from({ length: 2_000 }, (_, i) => `Unrecognized key: "k${i}" ${"x".repeat(10_000)}`);
    let checkpoint = start;
    for (let i = 0; i < RECENT_SKIPS_MAX; i++) checkpoint = advanceCheckpoint(checkpoint, { ...event, offset: i + 1 }, { kind: "skipped", issues });
    const [kept] = checkpoint.recentSkips;
    expect(kept?.issues).toHaveLength(SKIP_ISSUES_MAX + 1);
    expect(kept?.issues.at(-1)).toBe(`... and ${2_000 - SKIP_ISSUES_MAX} more`);
    expect(Math.max(...(kept?.issues ?? []).map((issue) => issue.length))).toBeLessThanOrEqual(SKIP_ISSUE_MAX_LENGTH + 3);
    expect(checkpoint.skipped).toBe(RECENT_SKIPS_MAX);
    // Ten such skips stay far below a checkpoint's 1 MiB.
    expect(JSON.stringify(checkpoint).length).toBeLessThan(32_000);
  });

  it("ignores foreign types silently but still advances the checkpoint", async () => {
    const { stream, counter, skips, engine } = setup();
    connectEngine(stream, engine);
    await stream.append({ type: "demo/ping" }, { type: "demo/pong", payload: { anything: true } });
    await settle(engine);
    expect(await engine.snapshot("counter")).toMatchObject({ offset: 2, skipped: 0, state: { count: 0 } });
    expect(skips).toEqual([]);
    expect(counter.calls.map((call) => call.offset)).toEqual([null]);
  });

  it("writes nothing for a batch of types it does not consume; a new engine passes them by again", async () => {
    const { stream, storage, engine } = setup();
    await stream.append(inc(1));
    await engine.catchUp();
    const writes = storage.checkpointWrites("counter");
    await stream.append({ type: "demo/ping" }, { type: "demo/pong" });
    await engine.deliver(stream.events.slice(1));
    expect(storage.checkpointWrites("counter")).toBe(writes);
    expect(await engine.snapshot("counter")).toMatchObject({ offset: 3, state: { count: 1, increments: 1 } });

    // Storage still holds the checkpoint at 1: a host that starts over reads 2 and 3 again, and
    // the next event it consumes writes the whole way.
    const counter = new RecordingCounter();
    const next = new ProcessorEngine({ stream, storage, processors: [counter], clock: fakeClock() });
    await next.start();
    expect(await next.snapshot("counter")).toMatchObject({ offset: 3, state: { count: 1, increments: 1 } });
    expect(counter.calls.map((call) => call.offset)).toEqual([null]);
    await stream.append(inc(2));
    await next.catchUp();
    expect(storage.checkpointWrites("counter")).toBe(writes + 1);
    const restarted = new ProcessorEngine({ stream, storage, processors: [new RecordingCounter()], clock: fakeClock() });
    expect(await restarted.snapshot("counter")).toMatchObject({ offset: 4, state: { count: 3, increments: 2 } });
  });

  it("folds the host's own writes without writing them; the next batch from the stream writes them before it answers", async () => {
    const { stream, storage, engine } = setup();
    await stream.append(inc(1));
    await engine.catchUp();
    const writes = storage.checkpointWrites("counter");
    // The host's own append, folded as it answers: nothing written yet.
    const own = await stream.append(inc(2));
    expect(await engine.deliver(own, { head: 2, own: true })).toEqual([{ slug: "counter", status: "processed", offset: 2 }]);
    expect(storage.checkpointWrites("counter")).toBe(writes);
    expect(storage.checkpoint("counter")?.offset).toBe(1);
    expect(await engine.snapshot("counter")).toMatchObject({ offset: 2, state: { count: 3, increments: 2 } });
    // The stream's delivery of it (nothing new to fold) is answered once storage has it.
    expect(await engine.deliver(own, { head: 2 })).toEqual([{ slug: "counter", status: "processed", offset: 2 }]);
    expect(storage.checkpointWrites("counter")).toBe(writes + 1);
    expect(storage.checkpoint("counter")).toMatchObject({ offset: 2, state: { count: 3, increments: 2 } });
  });

  it("a host that dies with its own writes unwritten reads them again from the stream", async () => {
    const { stream, storage, engine } = setup();
    await stream.append(inc(1));
    await engine.catchUp();
    await engine.deliver(await stream.append(inc(2)), { head: 2, own: true });
    expect(storage.checkpoint("counter")?.offset).toBe(1);
    const restarted = new ProcessorEngine({ stream, storage, processors: [new RecordingCounter()], clock: fakeClock() });
    await restarted.start();
    expect(await restarted.snapshot("counter")).toMatchObject({ offset: 2, state: { count: 3, increments: 2 } });
    expect(storage.checkpoint("counter")).toMatchObject({ offset: 2, state: { count: 3, increments: 2 } });
  });

  it("passes ephemeral events to processEvent without folding them or moving the checkpoint", async () => {
    const { stream, storage, counter, engine } = setup();
    connectEngine(stream, engine);
    await stream.append(inc(1));
    await settle(engine);
    const writes = storage.checkpointWrites("counter");
    await stream.append({ ...inc(50), ephemeral: true });
    await settle(engine);

    expect(await engine.snapshot("counter")).toMatchObject({ offset: 1, state: { count: 1, increments: 1 } });
    expect(storage.checkpointWrites("counter")).toBe(writes);
    expect(counter.calls.at(-1)).toEqual({ offset: 1, ephemeral: true, count: 1, previousCount: 1, caughtUp: true });
  });

  it("stops a batch at a processEvent error, surfaces it, and retries the event on redelivery", async () => {
    const { stream, storage, counter, engine } = setup();
    await stream.append(inc(1), inc(2), inc(3));
    counter.failOnce.add(2);

    const [failed] = await engine.deliver(stream.events);
    expect(failed).toMatchObject({ slug: "counter", status: "failed", offset: 1 });
    expect(failed?.status === "failed" && (failed.error as Error).message).toBe("boom at 2");
    expect(storage.checkpoint("counter")).toMatchObject({ offset: 1, state: { count: 1, increments: 1 } });
    expect(counter.calls.map((call) => call.offset)).toEqual([1, 2]);

    expect(await engine.deliver(stream.events)).toEqual([{ slug: "counter", status: "processed", offset: 3 }]);
    expect((await engine.snapshot("counter")).state).toEqual({ count: 6, increments: 3 });
    expect(counter.calls.map((call) => call.offset)).toEqual([1, 2, 2, 3, null]);
  });

  it("holds the chain while a blockProcessorWhile promise is pending", async () => {
    const { stream, counter, engine } = setup();
    const gate = Promise.withResolvers<void>();
    counter.block = ({ event }) => (event?.offset === 1 ? gate.promise : undefined);
    connectEngine(stream, engine);
    await stream.append(inc(1));
    await stream.append(inc(2));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(counter.calls.map((call) => call.offset)).toEqual([1]);

    gate.resolve();
    await settle(engine);
    expect(counter.calls.map((call) => call.offset)).toEqual([1, 2, null]);
  });

  it("fails the event whose blockProcessorWhile promise rejects", async () => {
    const { stream, counter, engine } = setup();
    counter.block = ({ event }) => (event?.offset === 2 ? Promise.reject(new Error("blocked work failed")) : undefined);
    await stream.append(inc(1), inc(2));
    const [outcome] = await engine.deliver(stream.events);
    expect(outcome).toMatchObject({ status: "failed", offset: 1, error: new Error("blocked work failed") });
  });

  it("surfaces a processEvent error and still settles what it blocked on", async () => {
    const stream = memoryStream();
    const gate = Promise.withResolvers<void>();
    class BlockThenThrow extends Counter {
      override async processEvent({ blockProcessorWhile }: CounterArgs) {
        blockProcessorWhile(gate.promise);
        throw new Error("thrown after blocking");
      }
    }
    const engine = new ProcessorEngine({ stream, storage: memoryStorage(), processors: [new BlockThenThrow()] });
    await stream.append(inc(1));
    const delivering = engine.deliver(stream.events);
    // Rejected after processEvent threw: the engine must still observe it.
    setTimeout(() => gate.reject(new Error("late rejection")), 1);
    const [outcome] = await delivering;
    expect(outcome).toMatchObject({ status: "failed", offset: 0, error: new Error("thrown after blocking") });
  });

  it("refuses blockProcessorWhile once the event's pass is over", async () => {
    const stream = memoryStream();
    let late: ((promise: Promise<unknown>) => void) | undefined;
    class Leaky extends Counter {
      override async processEvent({ blockProcessorWhile }: CounterArgs) {
        late = blockProcessorWhile;
      }
    }
    const engine = new ProcessorEngine({ stream, storage: memoryStorage(), processors: [new Leaky()] });
    await stream.append(inc(1));
    await engine.deliver(stream.events);
    expect(() => late?.(Promise.resolve())).toThrow(/after its event was processed/);
  });

  it("catches up in batches of batchSize, committing each, with the at-head pass at the end only", async () => {
    const { stream, storage, counter, engine } = setup({ limits: { batchSize: 2 } });
    await stream.append(inc(1), inc(1), inc(1), inc(1), inc(1));
    expect(await engine.catchUp()).toEqual([{ slug: "counter", status: "processed", offset: 5 }]);
    expect(storage.checkpointWrites("counter")).toBe(3);
    expect(counter.calls.map((call) => [call.offset, call.caughtUp])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, false],
      [5, true],
      [null, true],
    ]);
  });

  it("continues from the committed checkpoint in a new engine over the same storage", async () => {
    const { stream, storage, engine } = setup();
    await stream.append(inc(3), inc(4));
    await engine.catchUp();
    await stream.append(inc(5));

    const counter = new RecordingCounter();
    const next = new ProcessorEngine({ stream, storage, processors: [counter] });
    await next.start();
    // 4 is the milestone it appended on crossing 10, folded before the at-head pass.
    expect(await next.snapshot("counter")).toMatchObject({ offset: 4, state: { count: 12, increments: 3 } });
    expect(counter.calls.map((call) => call.offset)).toEqual([3, null]);
    expect(stream.events.map((event) => event.type)).toEqual([...Array(3).fill(COUNTER_EVENTS.incremented), COUNTER_EVENTS.milestoneReached]);
  });
});

describe("ProcessorEngine appends and configuration", () => {
  it("refuses an append of a type the contract does not emit, and appends nothing", async () => {
    class Rogue extends RecordingCounter {
      override async processEvent(args: CounterArgs) {
        // Counter emits only milestones; this is an increment.
        await (args.append as (...inputs: unknown[]) => Promise<unknown>)(inc(1));
      }
    }
    const stream = memoryStream();
    const engine = new ProcessorEngine({ stream, storage: memoryStorage(), processors: [new Rogue()] });
    await stream.append(inc(1));
    const [outcome] = await engine.deliver(stream.events);
    expect(outcome?.status).toBe("failed");
    expect(outcome?.status === "failed" && errorCode(outcome.error)).toBe("INVALID_ARGUMENT");
    expect(stream.events).toHaveLength(1);
  });

  it("keeps one chain per processor: one failing does not hold the other", async () => {
    const stream = memoryStream();
    const failing = new RecordingCounter();
    failing.failOnce.add(1);
    const otherContract = Object.freeze({ ...CounterContract, slug: "other-counter" });
    class OtherCounter extends RecordingCounter {
      override readonly contract = otherContract;
    }
    const other = new OtherCounter();
    const engine = new ProcessorEngine({ stream, storage: memoryStorage(), processors: [failing, other] });
    await stream.append(inc(1));
    const outcomes = await engine.deliver(stream.events);
    expect(outcomes.map((outcome) => [outcome.slug, outcome.status])).toEqual([
      ["counter", "failed"],
      ["other-counter", "processed"],
    ]);
  });

  it.each([
    ["two processors with one slug", { processors: [new Counter(), new Counter()] }, /share the slug "counter"/],
    ["batchSize 0", { limits: { batchSize: 0 } }, /batchSize/],
    ["batchSize past READ_MAX_LIMIT", { limits: { batchSize: 501 } }, /batchSize/],
    ["a fractional checkpoint limit", { limits: { checkpointMaxBytes: 1.5 } }, /checkpointMaxBytes/],
    ["no allowed deaths", { limits: { maxBackgroundDeaths: 0 } }, /maxBackgroundDeaths/],
  ])("refuses %s with INVALID_ARGUMENT", (_name, options, message) => {
    const construct = () => new ProcessorEngine({ stream: memoryStream(), storage: memoryStorage(), processors: [new Counter()], ...options });
    expect(construct).toThrow(message);
    expect(construct).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
  });

  it("refuses a snapshot of a processor it does not host", () => {
    const { engine } = setup();
    expect(() => engine.snapshot("nobody")).toThrow(/no processor "nobody"/);
  });

  it("answers UNAVAILABLE once stopped, and changes nothing", async () => {
    const { stream, storage, engine } = setup();
    await stream.append(inc(1));
    engine.stop();
    const [outcome] = await engine.deliver(stream.events);
    expect(outcome?.status === "failed" && errorCode(outcome.error)).toBe("UNAVAILABLE");
    expect(storage.checkpoint("counter")).toBeUndefined();
  });
});
