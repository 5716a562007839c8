import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { BackgroundClaim } from "../../types.ts";
import { connectEngine, fakeClock, memoryStorage, memoryStream, settle, type FakeClock, type MemoryStorage, type MemoryStream } from "../test-support/index.ts";
import { defineProcessorContract } from "./contract.ts";
import { ProcessorEngine } from "./engine.ts";
import { StreamProcessor, type BackgroundStart, type ProcessEventArgs, type ReduceArgs } from "./stream-processor.ts";

const REQUESTED = "test/job-requested";
const FINISHED = "test/job-finished";

const JobsContract = defineProcessorContract({
  slug: "jobs",
  version: "1.0.0",
  description: "runs each requested job once in the background",
  stateSchema: z.object({ open: z.array(z.number()).default([]) }),
  events: {
    [REQUESTED]: z.strictObject({ name: z.string() }),
    [FINISHED]: z.strictObject({ requestOffset: z.number().int() }),
  },
  consumes: [REQUESTED, FINISHED],
  emits: [FINISHED],
});

type Effect = (requestOffset: number) => Promise<void>;

/** Every open job gets one background driver at head; the driver runs the effect, then lands job-finished. */
class Jobs extends StreamProcessor<typeof JobsContract> {
  readonly contract = JobsContract;
  readonly answers: BackgroundStart[] = [];
  readonly #effect: Effect;
  readonly #attempts: number[];

  constructor(effect: Effect, attempts: number[]) {
    super();
    this.#effect = effect;
    this.#attempts = attempts;
  }

  override reduce({ event, state }: ReduceArgs<typeof JobsContract>) {
    if (event.type === REQUESTED) return { open: [...state.open, event.offset] };
    return { open: state.open.filter((offset) => offset !== event.payload.requestOffset) };
  }

  override async processEvent({ state, delivery, runInBackground }: ProcessEventArgs<typeof JobsContract>) {
    if (!delivery.caughtUp) return;
    for (const requestOffset of state.open) {
      const answer = await runInBackground(`job:${requestOffset}`, async ({ append, attempt }) => {
        this.#attempts.push(attempt);
        await this.#effect(requestOffset);
        await append({ type: FINISHED, payload: { requestOffset }, idempotencyKey: `jobs/finished:${requestOffset}` });
      });
      this.answers.push(answer);
    }
  }
}

/** An effect that records its calls and hangs, succeeds or throws as told. */
function controlledEffect() {
  const calls: number[] = [];
  let mode: "hang" | "succeed" | "throw" = "succeed";
  const effect: Effect = (requestOffset) => {
    calls.push(requestOffset);
    if (mode === "hang") return new Promise<void>(() => {});
    if (mode === "throw") return Promise.reject(new Error("effect broke"));
    return Promise.resolve();
  };
  return {
    effect,
    calls,
    set(next: typeof mode) {
      mode = next;
    },
  };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(check()).toBe(true);
}

interface Host {
  engine: ProcessorEngine;
  jobs: Jobs;
  givenUp: BackgroundClaim[];
  errors: unknown[];
  die(): void;
}

/** One incarnation of a host: an engine fed by the stream, over shared storage and clock. */
function host(stream: MemoryStream, storage: MemoryStorage, clock: FakeClock, effect: Effect, attempts: number[] = []): Host {
  const jobs = new Jobs(effect, attempts);
  const givenUp: BackgroundClaim[] = [];
  const errors: unknown[] = [];
  const engine = new ProcessorEngine({
    stream,
    storage,
    clock,
    processors: [jobs],
    onGiveUp: (claim) => givenUp.push(claim),
    onBackgroundError: ({ error }) => errors.push(error),
  });
  const connection = connectEngine(stream, engine);
  return {
    engine,
    jobs,
    givenUp,
    errors,
    die() {
      connection.disconnect();
      engine.stop();
    },
  };
}

function world() {
  return { stream: memoryStream(), storage: memoryStorage(), clock: fakeClock(), control: controlledEffect() };
}

describe("runInBackground", () => {
  it("records a claim before the work starts and deletes it when the work settles", async () => {
    const { stream, storage, clock, control } = world();
    const claimsDuringWork: BackgroundClaim[][] = [];
    const first = host(stream, storage, clock, async (offset) => {
      claimsDuringWork.push(storage.claims("jobs"));
      await control.effect(offset);
    });
    await first.engine.start();
    await stream.append({ type: REQUESTED, payload: { name: "a" } });
    await settle(first.engine);

    expect(claimsDuringWork).toEqual([[{ slug: "jobs", key: "job:1", attempts: 1, nextAttemptAt: clock.now(), status: "running" }]]);
    expect(storage.claims("jobs")).toEqual([]);
    // The work's facts are folded by then: what the host sends next does not wait for the delete.
    expect(storage.deletes).toEqual([{ key: "processor/jobs/claim/job:1", allowUnconfirmed: true }]);
    expect(stream.events.map((event) => [event.type, event.source])).toEqual([
      [REQUESTED, {}],
      [FINISHED, { processor: "jobs" }],
    ]);
    expect((await first.engine.snapshot("jobs")).state).toEqual({ open: [] });
  });

  it("tells the host of each claim as its write is issued, before the work starts (onClaim)", async () => {
    const { stream, storage, clock } = world();
    const told: Array<{ claim: BackgroundClaim; written: boolean; workStarted: boolean }> = [];
    let workStarted = false;
    const jobs = new Jobs(async () => {
      workStarted = true;
    }, []);
    const engine = new ProcessorEngine({
      stream,
      storage,
      clock,
      processors: [jobs],
      onClaim: (claim) => told.push({ claim, written: storage.puts.includes(`processor/jobs/claim/${claim.key}`), workStarted }),
    });
    connectEngine(stream, engine);
    await engine.start();
    await stream.append({ type: REQUESTED, payload: { name: "a" } });
    await stream.append({ type: REQUESTED, payload: { name: "b" } });
    await settle(engine);
    expect(told).toEqual([
      { claim: { slug: "jobs", key: "job:1", attempts: 1, nextAttemptAt: clock.now(), status: "running" }, written: true, workStarted: false },
      { claim: { slug: "jobs", key: "job:2", attempts: 1, nextAttemptAt: clock.now(), status: "running" }, written: true, workStarted: true },
    ]);
  });

  it("deletes a settled claim with the engine's next checkpoint write, and neither lists nor revives it meanwhile", async () => {
    const { stream, storage, clock, control } = world();
    const first = host(stream, storage, clock, control.effect);
    await first.engine.start();
    await stream.append({ type: REQUESTED, payload: { name: "a" } });
    await until(() => !first.engine.isRunningInBackground("jobs", "job:1") && first.engine.isIdle());
    // Settled: known done here, still in storage until the next write.
    expect(storage.claims("jobs")).toHaveLength(1);
    expect(await first.engine.claims()).toEqual([]);
    expect((await first.engine.reviveClaims()).revived).toEqual([]);
    expect(storage.deletes).toEqual([]);
    // The next batch's checkpoint write takes the delete with it.
    await stream.append({ type: REQUESTED, payload: { name: "b" } });
    await settle(first.engine);
    expect(storage.claims("jobs")).toEqual([]);
    expect(storage.deletes[0]).toEqual({ key: "processor/jobs/claim/job:1", allowUnconfirmed: true });
  });

  it("runs one driver per key however many passes ask for it", async () => {
    const { stream, storage, clock, control } = world();
    const gate = Promise.withResolvers<void>();
    const first = host(stream, storage, clock, async (offset) => {
      await control.effect(offset);
      await gate.promise;
    });
    await first.engine.start();
    await stream.append({ type: REQUESTED, payload: { name: "a" } });
    await until(() => control.calls.length === 1);
    // More batches reach the head while the work runs; each makes an at-head pass.
    await stream.append({ type: "demo/ping" });
    await stream.append({ type: "demo/ping" });
    await first.engine.chainsIdle();
    expect(first.engine.isRunningInBackground("jobs", "job:1")).toBe(true);

    gate.resolve();
    await settle(first.engine);
    expect(control.calls).toEqual([1]);
    expect(first.jobs.answers).toEqual(["started", "running", "running"]);
  });

  it("revives work a dead host left, after a backoff, in a new engine over the same storage", async () => {
    const { stream, storage, clock, control } = world();
    control.set("hang");
    const first = host(stream, storage, clock, control.effect);
    await first.engine.start();
    await stream.append({ type: REQUESTED, payload: { name: "a" } });
    await until(() => control.calls.length === 1);
    first.die();

    control.set("succeed");
    const second = host(stream, storage, clock, control.effect);
    const report = await second.engine.start();
    expect(report.revived).toEqual([
      { slug: "jobs", key: "job:1", attempts: 1, status: "waiting", nextAttemptAt: expect.any(Number) },
    ]);
    expect(report.givenUp).toEqual([]);
    expect(second.jobs.answers).toEqual(["scheduled"]);
    await settle(second.engine);

    expect(clock.sleeps).toEqual([1_000]);
    expect(control.calls).toEqual([1, 1]);
    expect(stream.events.filter((event) => event.type === FINISHED)).toHaveLength(1);
    expect(storage.claims("jobs")).toEqual([]);
  });

  it("tells the work which start it is: 1 at first, 2 after its host died mid-run", async () => {
    const { stream, storage, clock } = world();
    const attempts: number[] = [];
    const first = host(stream, storage, clock, () => new Promise<void>(() => {}), attempts);
    await first.engine.start();
    await stream.append({ type: REQUESTED, payload: { name: "a" } });
    await until(() => attempts.length === 1);
    first.die();

    const second = host(stream, storage, clock, () => Promise.resolve(), attempts);
    await second.engine.start();
    await settle(second.engine);
    expect(attempts).toEqual([1, 2]);
    expect(stream.events.filter((event) => event.type === FINISHED)).toHaveLength(1);
  });

  it("bounds revivals: backoff doubles, and after maxBackgroundDeaths the claim is given up", async () => {
    const { stream, storage, clock, control } = world();
    control.set("hang");
    let current = host(stream, storage, clock, control.effect);
    await current.engine.start();
    await stream.append({ type: REQUESTED, payload: { name: "doomed" } });
    for (let attempt = 1; attempt <= 5; attempt++) {
      await until(() => control.calls.length === attempt);
      current.die();
      current = host(stream, storage, clock, control.effect);
      await current.engine.start();
    }

    expect(control.calls).toHaveLength(5);
    expect(clock.sleeps).toEqual([1_000, 2_000, 4_000, 8_000]);
    const tombstone = { slug: "jobs", key: "job:1", attempts: 5, status: "given-up", nextAttemptAt: expect.any(Number) };
    expect(current.givenUp).toEqual([tombstone]);
    expect(storage.claims("jobs")).toEqual([tombstone]);
    expect(current.jobs.answers).toEqual(["given-up"]);
    await settle(current.engine);
    expect(control.calls).toHaveLength(5);
  });

  it("releases a revived claim its processor no longer takes up", async () => {
    const { stream, storage, clock, control } = world();
    control.set("hang");
    const first = host(stream, storage, clock, control.effect);
    await first.engine.start();
    await stream.append({ type: REQUESTED, payload: { name: "a" } });
    await until(() => control.calls.length === 1);
    first.die();
    // Someone else finished the job while no host was up.
    await stream.append({ type: FINISHED, payload: { requestOffset: 1 } });

    const second = host(stream, storage, clock, control.effect);
    const report = await second.engine.start();
    expect(report.released.map((claim) => claim.key)).toEqual(["job:1"]);
    expect(storage.claims("jobs")).toEqual([]);
    expect(control.calls).toEqual([1]);
  });

  it("does not count live work as dead when a host revives from its alarm", async () => {
    const { stream, storage, clock, control } = world();
    control.set("hang");
    const first = host(stream, storage, clock, control.effect);
    await first.engine.start();
    await stream.append({ type: REQUESTED, payload: { name: "a" } });
    await until(() => control.calls.length === 1);

    const report = await first.engine.reviveClaims();
    expect(report).toMatchObject({ revived: [], givenUp: [], released: [] });
    expect(storage.claims("jobs")).toMatchObject([{ key: "job:1", attempts: 1, status: "running" }]);
    expect(control.calls).toEqual([1]);
  });

  it("reports work that throws and releases its claim", async () => {
    const { stream, storage, clock, control } = world();
    control.set("throw");
    const first = host(stream, storage, clock, control.effect);
    await first.engine.start();
    await stream.append({ type: REQUESTED, payload: { name: "a" } });
    await settle(first.engine);
    expect(first.errors).toEqual([new Error("effect broke")]);
    expect(storage.claims("jobs")).toEqual([]);
  });
});
