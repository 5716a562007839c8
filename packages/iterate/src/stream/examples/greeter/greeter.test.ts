import { describe, expect, it } from "vitest";
import { MAX_RUN_ATTEMPTS } from "../../processor/index.ts";
import { ProcessorEngine } from "../../processor/index.ts";
import {
  connectEngine,
  fakeClock,
  memoryStorage,
  memoryStream,
  processEventOnce,
  reduceProcessor,
  settle,
  type FakeClock,
  type MemoryStorage,
  type MemoryStream,
  type PartialEvent,
} from "../../test-support/index.ts";
import { GREETER_EVENTS as G, type GreeterState } from "./contract.ts";
import { fakeMailer, type FakeMailer } from "./mailer.ts";
import { Greeter, driverKey } from "./processor.ts";

const ada = { name: "Ada", to: "ada@example.com", language: "en" };
const requested = (payload: object = ada): PartialEvent => ({ type: G.requested, payload });
const started = (attempt: number, requestOffset = 1): PartialEvent => ({ type: G.attemptStarted, payload: { requestOffset, attempt } });
const composed = (attempt: number): PartialEvent => ({ type: G.composed, payload: { requestOffset: 1, attempt, text: "Hello, Ada!" } });
const settledFact = (status: string, requestOffset = 1): PartialEvent => ({ type: G.settled, payload: { requestOffset, status } });

const run = (fields: Partial<GreeterState["runs"][string]>) => ({
  requestOffset: 1,
  attempt: 0,
  lastStep: "greeting-requested",
  lastStepOffset: 1,
  status: "requested" as const,
  name: "Ada",
  to: "ada@example.com",
  language: "en" as const,
  ...fields,
});

describe("Greeter: events through reduceProcessor", () => {
  it.each<[string, PartialEvent[], GreeterState]>([
    ["a request opens a run", [requested()], { runs: { 1: run({}) }, totals: {} }],
    ["a request in an unsupported language opens none", [requested({ ...ada, language: "tlh" })], { runs: {}, totals: {} }],
    ["an invalid request is skipped", [requested({ name: "", to: "x" })], { runs: {}, totals: {} }],
    [
      "an attempt starts and a step lands",
      [requested(), started(1), composed(1)],
      { runs: { 1: run({ attempt: 1, status: "running", lastStep: "greeting-composed", lastStepOffset: 3 }) }, totals: {} },
    ],
    [
      "a step of a dead attempt is ignored",
      [requested(), started(1), started(2), composed(1)],
      { runs: { 1: run({ attempt: 2, status: "running", lastStep: "greeting-attempt-started", lastStepOffset: 3 }) }, totals: {} },
    ],
    ["settling closes the run and counts it", [requested(), started(1), settledFact("succeeded")], { runs: {}, totals: { succeeded: 1 } }],
    ["a refusal without a run is still counted", [requested({ ...ada, language: "tlh" }), settledFact("refused")], { runs: {}, totals: { refused: 1 } }],
  ])("%s", (_name, events, expected) => {
    expect(reduceProcessor(new Greeter(fakeMailer()), events)).toEqual(expected);
  });
});

const key = (fact: string, attempt: number) => `greeter/greeting-${fact}:1:${attempt}`;

describe("Greeter: states through processEvent", () => {

  it.each<[string, GreeterState, FakeMailer["mode"], (string | undefined)[], object]>([
    [
      "a fresh request runs attempt 1 to success",
      { runs: { 1: run({}) }, totals: {} },
      "send",
      [key("attempt-started", 1), key("composed", 1), key("delivered", 1), "greeter/settled:1"],
      { requestOffset: 1, status: "succeeded" },
    ],
    [
      "a run found mid-attempt starts the next attempt at once",
      { runs: { 1: run({ attempt: 1, status: "running", lastStep: "greeting-composed", lastStepOffset: 3 }) }, totals: {} },
      "send",
      [key("attempt-started", 2), key("composed", 2), key("delivered", 2), "greeter/settled:1"],
      { requestOffset: 1, status: "succeeded" },
    ],
    [
      "a refusing mailer settles the run refused",
      { runs: { 1: run({}) }, totals: {} },
      "refuse",
      [key("attempt-started", 1), key("composed", 1), "greeter/settled:1"],
      { requestOffset: 1, status: "refused", error: "ada@example.com does not accept mail" },
    ],
    [
      "a failing mailer settles the run failed",
      { runs: { 1: run({}) }, totals: {} },
      "throw",
      [key("attempt-started", 1), key("composed", 1), "greeter/settled:1"],
      { requestOffset: 1, status: "failed", error: "mail server closed the connection" },
    ],
    [
      "a run whose attempts are spent settles unavailable",
      { runs: { 1: run({ attempt: MAX_RUN_ATTEMPTS, status: "running" }) }, totals: {} },
      "send",
      ["greeter/settled:1"],
      { requestOffset: 1, status: "unavailable", error: "3 attempts ended before settling" },
    ],
  ])("%s", async (_name, state, mode, keys, settlement) => {
    const mailer = fakeMailer();
    mailer.mode = mode;
    const record = await processEventOnce(new Greeter(mailer), { state, clock: fakeClock() });
    expect(record.background).toEqual([driverKey(1)]);
    expect(record.appended).toEqual([]);
    await record.runBackground();
    expect(record.appended.map((input) => input.idempotencyKey)).toEqual(keys);
    expect(record.appended.every((input) => input.source?.processor === "greeter")).toBe(true);
    expect(record.appended.at(-1)).toMatchObject({ type: G.settled, payload: settlement });
  });

  it("settles an unsupported request refused while processing it, without a driver", async () => {
    const record = await processEventOnce(new Greeter(fakeMailer()), {
      event: { ...requested({ ...ada, language: "tlh" }), offset: 4 },
      caughtUp: false,
    });
    expect(record.background).toEqual([]);
    expect(record.appended).toEqual([
      {
        type: G.settled,
        payload: { requestOffset: 4, status: "refused", error: 'no greeting in "tlh"' },
        idempotencyKey: "greeter/settled:4",
        source: { processor: "greeter" },
      },
    ]);
  });

  it("starts no driver before it is caught up", async () => {
    const record = await processEventOnce(new Greeter(fakeMailer()), { event: requested(), state: { runs: { 1: run({}) }, totals: {} }, caughtUp: false });
    expect(record.background).toEqual([]);
  });
});

/** A host incarnation: an engine fed by the stream, over storage that outlives it. */
function incarnation(stream: MemoryStream, storage: MemoryStorage, clock: FakeClock, mailer: FakeMailer) {
  const engine = new ProcessorEngine({ stream, storage, clock, processors: [new Greeter(mailer)] });
  const connection = connectEngine(stream, engine);
  return {
    engine,
    connection,
    die() {
      connection.disconnect();
      engine.stop();
    },
  };
}

async function mailerCalled(mailer: FakeMailer, times: number): Promise<void> {
  for (let i = 0; i < 200 && mailer.calls.length < times; i++) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(mailer.calls).toHaveLength(times);
}

describe("Greeter in an engine", () => {
  it("greets, settles, and re-reduces from the log to the engine's state", async () => {
    const stream = memoryStream();
    const mailer = fakeMailer();
    const host = incarnation(stream, memoryStorage(), fakeClock(), mailer);
    await host.engine.start();
    const [request] = await stream.append({ type: G.requested, payload: ada });
    const settlement = await stream.waitForEvent({ type: G.settled, payload: { requestOffset: request?.offset }, timeoutMs: 1_000 });
    await settle(host.engine);

    expect(settlement.payload).toEqual({ requestOffset: 1, status: "succeeded" });
    expect([...mailer.sent.values()]).toEqual([{ to: "ada@example.com", text: "Hello, Ada!", receiptId: "receipt-1" }]);
    const snapshot = await host.engine.snapshot("greeter");
    expect(snapshot.state).toEqual({ runs: {}, totals: { succeeded: 1 } });
    expect(reduceProcessor(new Greeter(fakeMailer()), stream.events)).toEqual(snapshot.state);
    expect(host.connection.failures()).toEqual([]);
  });

  it("retries an attempt whose host died mid-call, then settles once", async () => {
    const stream = memoryStream();
    const storage = memoryStorage();
    const clock = fakeClock();
    const mailer = fakeMailer();
    mailer.mode = "hang";
    const first = incarnation(stream, storage, clock, mailer);
    await first.engine.start();
    await stream.append({ type: G.requested, payload: ada });
    await mailerCalled(mailer, 1);
    first.die();

    mailer.mode = "send";
    const second = incarnation(stream, storage, clock, mailer);
    await second.engine.start();
    await settle(second.engine);

    const facts = stream.events.map((event) => [event.type.replace("events.example.com/greeter/", ""), (event.payload as { attempt?: number }).attempt]);
    expect(facts).toEqual([
      ["greeting-requested", undefined],
      ["greeting-attempt-started", 1],
      ["greeting-composed", 1],
      ["greeting-attempt-started", 2],
      ["greeting-composed", 2],
      ["greeting-delivered", 2],
      ["greeting-settled", undefined],
    ]);
    expect(stream.events.at(-1)?.payload).toEqual({ requestOffset: 1, status: "succeeded" });
    expect(mailer.sent.size).toBe(1);
    expect(clock.sleeps).toEqual([1_000]);
    expect(storage.claims("greeter")).toEqual([]);
  });

  it("settles unavailable once every allowed attempt died", async () => {
    const stream = memoryStream();
    const storage = memoryStorage();
    const clock = fakeClock();
    const mailer = fakeMailer();
    mailer.mode = "hang";
    let host = incarnation(stream, storage, clock, mailer);
    await host.engine.start();
    await stream.append({ type: G.requested, payload: ada });
    for (let attempt = 1; attempt <= MAX_RUN_ATTEMPTS; attempt++) {
      await mailerCalled(mailer, attempt);
      host.die();
      host = incarnation(stream, storage, clock, mailer);
      await host.engine.start();
    }
    await settle(host.engine);

    expect(stream.events.at(-1)?.payload).toEqual({ requestOffset: 1, status: "unavailable", error: "3 attempts ended before settling" });
    expect(stream.events.filter((event) => event.type === G.attemptStarted)).toHaveLength(MAX_RUN_ATTEMPTS);
    expect((await host.engine.snapshot("greeter")).state).toEqual({ runs: {}, totals: { unavailable: 1 } });
    expect(mailer.sent.size).toBe(0);
    expect(storage.claims("greeter")).toEqual([]);
  });

  it("refuses an unsupported request at once and never mails", async () => {
    const stream = memoryStream();
    const mailer = fakeMailer();
    const host = incarnation(stream, memoryStorage(), fakeClock(), mailer);
    await host.engine.start();
    await stream.append({ type: G.requested, payload: { ...ada, language: "tlh" } });
    await settle(host.engine);
    expect(stream.events.at(-1)?.payload).toEqual({ requestOffset: 1, status: "refused", error: 'no greeting in "tlh"' });
    expect(mailer.calls).toEqual([]);
  });
});
