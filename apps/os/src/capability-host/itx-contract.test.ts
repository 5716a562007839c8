import { describe, expect, test } from "vitest";
import { ProcessorEngine } from "iterate/stream/processor";
import { connectEngine, fakeClock, memoryStorage, memoryStream, reduceProcessor, settle } from "iterate/stream/test-support";
import {
  CAPABILITY_DISCONNECTED,
  CAPABILITY_PROVIDED,
  CAPABILITY_REVOKED,
  INTERRUPTED_RUN_ERROR,
  ITX_CREATED,
  ItxCore,
  RUN_REQUESTED,
  RUN_SETTLED,
  confinementOfState,
  longestProvidedPrefix,
  type EnqueuedRunner,
} from "./itx-contract.ts";

const provide = (path: string[], extra: Record<string, unknown> = {}) => ({
  type: CAPABILITY_PROVIDED,
  payload: { path, kind: "live", live: { shape: "function", connectionId: "c1" }, ...extra },
});

describe("the itx core contract", () => {
  test("the first birth certificate wins", () => {
    const state = reduceProcessor(new ItxCore(), [
      { type: ITX_CREATED, payload: { name: "a", parent: "/", ancestors: ["/"] } },
      { type: ITX_CREATED, payload: { name: "b", parent: "/x", ancestors: ["/", "/x"] } },
    ]);
    expect(state.born).toEqual({ name: "a", parent: "/", ancestors: ["/"] });
  });

  test("mounts are keyed by path; a later provide replaces; revoke removes only its own offset", () => {
    const state = reduceProcessor(new ItxCore(), [
      provide(["slack"]),
      provide(["slack", "chat", "postMessage"]),
      provide(["slack"], { instructions: "second" }),
      { type: CAPABILITY_REVOKED, payload: { path: ["slack"], providedAtOffset: 1 } },
    ]);
    expect(Object.keys(state.mounts).toSorted()).toEqual(["slack", "slack.chat.postMessage"]);
    expect(state.mounts.slack?.instructions).toBe("second");
    expect(state.mounts.slack?.providedAtOffset).toBe(3);
  });

  test("revoke without an offset removes the current mount; disconnect marks it", () => {
    const state = reduceProcessor(new ItxCore(), [
      provide(["a"]),
      provide(["b"]),
      { type: CAPABILITY_REVOKED, payload: { path: ["a"] } },
      { type: CAPABILITY_DISCONNECTED, payload: { path: ["b"], providedAtOffset: 2 } },
      { type: CAPABILITY_DISCONNECTED, payload: { path: ["b"], providedAtOffset: 99 } },
    ]);
    expect(state.mounts.a).toBeUndefined();
    expect(state.mounts.b?.disconnected).toBe(true);
  });

  test("the jail row answers every path nothing longer answers; grants sit beside it; revoking it frees the context", () => {
    const jailRow = { type: CAPABILITY_PROVIDED, payload: { path: [], kind: "null" } };
    const grant = { type: CAPABILITY_PROVIDED, payload: { path: ["append"], kind: "built-in" } };
    const jailed = reduceProcessor(new ItxCore(), [provide(["greet"]), jailRow, grant]);
    expect(longestProvidedPrefix(jailed, ["greet", "loudly"])).toMatchObject({ mount: { path: ["greet"] }, remainder: ["loudly"] });
    expect(longestProvidedPrefix(jailed, ["fetch"])).toMatchObject({ mount: { path: [], kind: "null" }, remainder: ["fetch"] });
    expect(confinementOfState(jailed, "/j")).toEqual({ jail: "/j", grants: ["append"] });
    const freed = reduceProcessor(new ItxCore(), [jailRow, grant, { type: CAPABILITY_REVOKED, payload: { path: [] } }]);
    expect(confinementOfState(freed, "/j")).toBeUndefined();
    expect(longestProvidedPrefix(freed, ["fetch"])).toBeUndefined();
    // Null sits only at the empty path, and the empty path holds only null.
    const odd = reduceProcessor(new ItxCore(), [provide([]), { type: CAPABILITY_PROVIDED, payload: { path: ["x"], kind: "null" } }]);
    expect(odd.mounts).toEqual({});
  });

  test("malformed facts are skipped, not folded", () => {
    const state = reduceProcessor(new ItxCore(), [provide(["a"], { kind: "magic" }), provide([])]);
    expect(state.mounts).toEqual({});
  });

  test("the longest provided prefix wins and receives the remainder", () => {
    const state = reduceProcessor(new ItxCore(), [provide(["slack"]), provide(["slack", "chat"])]);
    expect(longestProvidedPrefix(state, ["slack", "chat", "postMessage"])).toMatchObject({
      mount: { path: ["slack", "chat"] },
      remainder: ["postMessage"],
    });
    expect(longestProvidedPrefix(state, ["slack", "users"])).toMatchObject({ mount: { path: ["slack"] }, remainder: ["users"] });
    expect(longestProvidedPrefix(state, ["github"])).toBeUndefined();
  });

  test("re-reducing the same events gives the same table", () => {
    const events = [provide(["a"]), provide(["b"]), { type: CAPABILITY_REVOKED, payload: { path: ["a"] } }];
    expect(reduceProcessor(new ItxCore(), events)).toEqual(reduceProcessor(new ItxCore(), events));
  });

  test("an enqueued run whose host died mid-run settles failed with RESOURCE_EXHAUSTED and never starts again (a poison pill)", async () => {
    const stream = memoryStream({ source: { principal: "admin", origin: "/" } });
    const storage = memoryStorage();
    const clock = fakeClock();
    const started: string[] = [];
    const incarnation = (runner: EnqueuedRunner) => {
      const engine = new ProcessorEngine({ stream, storage, clock, processors: [new ItxCore(runner)] });
      return { engine, connection: connectEngine(stream, engine) };
    };
    // The first host starts the run, and the run never ends: it hangs the host, which is restarted.
    const first = incarnation(async (run) => {
      started.push(run.script);
      return new Promise(() => {});
    });
    await first.engine.start();
    await stream.append({ type: RUN_REQUESTED, payload: { script: "async () => { while (true) {} }", enqueued: true } });
    for (let i = 0; i < 100 && started.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(started).toHaveLength(1);
    first.connection.disconnect();
    first.engine.stop();

    const second = incarnation(async (run) => {
      started.push(run.script);
      return { status: "succeeded", result: "ran again" };
    });
    await second.engine.start();
    await settle(second.engine);
    expect(started).toHaveLength(1);
    const settled = stream.events.filter((event) => event.type === RUN_SETTLED);
    expect(settled.map((event) => event.payload)).toEqual([{ requestOffset: 1, status: "failed", error: INTERRUPTED_RUN_ERROR }]);
    expect((await second.engine.snapshot("core")).state).toMatchObject({ runs: {} });
  });

  test("an enqueued run whose runner throws settles failed with the error's code; one whose settle fails is settled again without running twice", async () => {
    const stream = memoryStream({ source: { principal: "admin", origin: "/" } });
    let runs = 0;
    const engine = new ProcessorEngine({
      stream,
      storage: memoryStorage(),
      clock: fakeClock(),
      processors: [
        new ItxCore(async (run) => {
          runs += 1;
          if (run.script.includes("platform")) throw Object.assign(new Error("[UNAVAILABLE] the origin's host did not answer"), { code: "UNAVAILABLE" });
          return { status: "succeeded", result: runs };
        }),
      ],
    });
    connectEngine(stream, engine);
    await engine.start();
    await stream.append({ type: RUN_REQUESTED, payload: { script: "async () => 'platform'", enqueued: true } });
    await settle(engine);
    expect(stream.events.filter((event) => event.type === RUN_SETTLED).map((event) => event.payload)).toEqual([
      { requestOffset: 1, status: "failed", error: { code: "UNAVAILABLE", message: "the origin's host did not answer" } },
    ]);
    // The settle's first append is refused once: the run stays open, and the next pass settles it with the same outcome.
    const append = stream.append.bind(stream);
    let refuseOnce = true;
    stream.append = async (...inputs) => {
      if (refuseOnce && inputs.some((input) => input.type === RUN_SETTLED)) {
        refuseOnce = false;
        throw Object.assign(new Error("[UNAVAILABLE] the stream is busy"), { code: "UNAVAILABLE" });
      }
      return append(...inputs);
    };
    const [requested] = await append({ type: RUN_REQUESTED, payload: { script: "async () => 'once'", enqueued: true } });
    await settle(engine);
    expect(refuseOnce).toBe(false);
    await append({ type: "demo/next" });
    await settle(engine);
    const settled = stream.events.filter((event) => event.type === RUN_SETTLED && (event.payload as { requestOffset: number }).requestOffset === requested?.offset);
    expect(settled.map((event) => event.payload)).toEqual([{ requestOffset: requested?.offset, status: "succeeded", result: 2 }]);
    expect(runs).toBe(2);
  });

  test("an enqueued run that settles in its first start is settled by its runner's outcome", async () => {
    const stream = memoryStream({ source: { principal: "admin", origin: "/" } });
    const engine = new ProcessorEngine({ stream, storage: memoryStorage(), clock: fakeClock(), processors: [new ItxCore(async () => ({ status: "succeeded", result: 7 }))] });
    connectEngine(stream, engine);
    await engine.start();
    await stream.append({ type: RUN_REQUESTED, payload: { script: "async () => 7", enqueued: true } });
    await settle(engine);
    expect(stream.events.filter((event) => event.type === RUN_SETTLED).map((event) => event.payload)).toEqual([{ requestOffset: 1, status: "succeeded", result: 7 }]);
  });
});
