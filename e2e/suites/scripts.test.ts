import { describe, expect } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import type { StreamEvent } from "iterate/types";
import { test } from "../harness/fixtures.ts";

/** `run-settled` as these tests read it. */
type Settled = StreamEvent<string, { requestOffset: number; status: string; result?: unknown }>;

describe("scripts", () => {
  test("a script runs with an itx scoped to the calling context, and its run is on the stream", async ({ project: { itx } }) => {
    await itx.provideCapability({ name: "greet", capability: (who: string) => `hello ${who}` });
    const child = itx.extend({ name: "worker" });
    expect(await itx.run("async (itx) => (await itx.whoami()).path")).toBe("/");
    expect(await child.run("async (itx) => ({ path: (await itx.whoami()).path, greeting: await itx.greet('script') })")).toEqual({
      path: "/itx/worker",
      greeting: "hello script",
    });
    expect(await itx.run("async () => undefined")).toBeUndefined();
    const events = await child.getEvents({ types: ["events.iterate.com/itx/run-requested", "events.iterate.com/itx/run-settled"] });
    expect(events.map((event: StreamEvent) => event.type.split("/").at(-1))).toEqual(["run-requested", "run-settled"]);
    expect(events[1]?.payload).toEqual({ requestOffset: events[0]?.offset, status: "succeeded", result: { path: "/itx/worker", greeting: "hello script" } });
    expect(await itx.capabilityHost.runScript("async (itx) => 6 * 7")).toBe(42);
  });

  test("a thrown error is SCRIPT_FAILED with the script's message; a syntax error says where", async ({ project: { itx } }) => {
    const thrown = await expectCode(itx.run("async () => { throw new Error('the database is on fire') }"), "SCRIPT_FAILED");
    expect(thrown.message).toMatch(/the database is on fire/);
    const syntax = await expectCode(itx.run("async (itx) => {\n  return 1 +* 2;\n}"), "SCRIPT_FAILED");
    expect(syntax.message).toMatch(/SyntaxError: .* at line 2, column \d+ of the script/);
    await expectCode(itx.run("42"), "SCRIPT_FAILED");
    const settled = (await itx.getEvents({ types: ["events.iterate.com/itx/run-settled"] })) as Settled[];
    expect(settled.map((event) => event.payload.status)).toEqual(["failed", "failed", "failed"]);
  });

  test("what a script throws is its run's failure, whatever it threw", async ({ project: { itx } }) => {
    const marker = `thrown-${crypto.randomUUID()}`;
    for (const script of [`async () => { throw new Error("${marker}-error"); }`, `async () => { throw "${marker}-string"; }`, `async () => { throw { message: "${marker}-object", code: "TIMEOUT" }; }`]) {
      const failure = await expectCode(itx.run(script), "SCRIPT_FAILED");
      expect(failure.message).toContain(marker);
    }
    // A value whose message cannot be read (a getter that throws) still fails the run plainly.
    const unreadable = await expectCode(itx.run(`async () => { throw { get message() { throw new Error("no"); } }; }`), "SCRIPT_FAILED");
    expect(unreadable.message).toMatch(/no message/);
  });

  test("hanging, looping, oversized and prying scripts end with coded errors and the context keeps working", async ({ project: { itx } }) => {
    await expectCode(itx.run("async () => { await new Promise((r) => setTimeout(r, 10_000)); return 1; }", { timeoutMs: 300 }), "TIMEOUT");
    // A promise nothing can ever settle is caught by the runtime at once.
    await expectCode(itx.run("async () => new Promise(() => {})", { timeoutMs: 5_000 }), ["SCRIPT_FAILED", "TIMEOUT"]);
    const loop = await expectCode(itx.run("async () => { for (;;) {} }", { timeoutMs: 20_000 }), "SCRIPT_FAILED");
    expect(loop.message).toMatch(/LOOP_ITERATIONS_MAX/);
    await expectCode(itx.run("async () => { let i = 0; while (true) i++; }", { timeoutMs: 20_000 }), "SCRIPT_FAILED");
    const huge = await expectCode(itx.run("async () => 'x'.repeat(1_000_000)"), "SCRIPT_FAILED");
    expect(huge.message).toMatch(/RESULT_MAX_BYTES/);
    // A message too long for the event that settles its run is cut: the run still settles.
    const loud = await expectCode(itx.run("async () => { throw new Error('x'.repeat(3_000_000)); }"), "SCRIPT_FAILED");
    expect(loud.message).toMatch(/FAILURE_MESSAGE_MAX_LENGTH/);
    const requests = await itx.getEvents({ types: ["events.iterate.com/itx/run-requested"] });
    const loudRequest = requests.find((event) => JSON.stringify(event.payload).includes("3_000_000"));
    if (loudRequest === undefined) throw new Error("the run's request is not on the stream");
    const loudSettled = await itx.getEvents({ types: ["events.iterate.com/itx/run-settled"], afterOffset: loudRequest.offset });
    expect(loudSettled[0]?.payload).toMatchObject({ requestOffset: loudRequest.offset, status: "failed", error: { code: "SCRIPT_FAILED" } });
    expect(await itx.run("async () => [typeof LOADER, typeof STREAM, typeof env, typeof process]")).toEqual(["undefined", "undefined", "undefined", "undefined"]);
    await expectCode(itx.run("async () => Symbol('x')"), "SCRIPT_FAILED");
    await expectCode(itx.run("x".repeat(64_001)), "INVALID_ARGUMENT");
    await expectCode(itx.run("async () => 1", { timeoutMs: 10 ** 9 }), "INVALID_ARGUMENT");
    expect(await itx.run("async (itx) => (await itx.whoami()).path")).toBe("/");
  });

  test("runs of one script in two chains of reactions at once never share an isolate", async ({ project: { itx } }) => {
    // Each enqueued request appended from here begins a chain of its own. The runner keeps the
    // script's isolate across chains (an agent's next turn finds it warm) but never lets two chains
    // hold it at once: each call's egress borrows the authority lent for its isolate, and that
    // must stamp the call's own chain. A shared global would show the two runs in one isolate.
    const script = `async () => {
      const me = Math.random();
      globalThis.holder = me;
      await new Promise((done) => setTimeout(done, 500));
      return globalThis.holder === me ? "alone" : "shared";
    }`;
    const requests = await Promise.all(
      [1, 2].map(async () => (await itx.append({ type: "events.iterate.com/itx/run-requested", payload: { script, enqueued: true } }))[0]?.offset as number),
    );
    const settled = await Promise.all(
      requests.map((offset) =>
        itx.waitForEvent({ type: "events.iterate.com/itx/run-settled", payload: { requestOffset: offset }, afterOffset: offset, timeoutMs: 20_000 }),
      ),
    );
    expect((settled as Settled[]).map((event) => event.payload.result)).toEqual(["alone", "alone"]);
    // A later chain runs the same script as well (in the isolate the first chains left, when it is still loaded).
    const [later] = await itx.append({ type: "events.iterate.com/itx/run-requested", payload: { script, enqueued: true } });
    if (later === undefined) throw new Error("append answered no event");
    const third = (await itx.waitForEvent({ type: "events.iterate.com/itx/run-settled", payload: { requestOffset: later.offset }, afterOffset: later.offset, timeoutMs: 20_000 })) as Settled;
    expect(third.payload.result).toBe("alone");
  });

  test("an enqueued run request is run by the context's own processor", async ({ project: { itx } }) => {
    const [requested] = await itx.append({
      type: "events.iterate.com/itx/run-requested",
      payload: { script: "async (itx) => (await itx.whoami()).path + ' from the processor'", enqueued: true },
    });
    if (requested === undefined) throw new Error("append answered no event");
    const settled = await itx.waitForEvent({
      type: "events.iterate.com/itx/run-settled",
      payload: { requestOffset: requested.offset },
      afterOffset: requested.offset,
      timeoutMs: 20_000,
    });
    expect(settled.payload).toEqual({ requestOffset: requested.offset, status: "succeeded", result: "/ from the processor" });
    expect(settled.source.processor).toBe("core");
  });
});
