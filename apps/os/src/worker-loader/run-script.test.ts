import { RpcTarget, env, exports } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import { describe, expect, test } from "vitest";
import { ensureContext } from "../itx/context-lifecycle.ts";
import { runScript } from "./run-script.ts";
import { HeldRunner, type RunnerBinding } from "./runner-client.ts";
import type { RunnerSessionWatch } from "../runner/runner-protocol.ts";
import { isolateItx } from "../itx/itx-rpc-target.ts";
import { LIMITS } from "../limits.ts";

// runScript on both roads. Without a RUNNER binding (a deployment, and these tests) the script loads
// in this Worker's own Loader. With one, it runs in the runner; here the runner's entrypoint is a
// loopback of this worker: the protocol and its deadline are real, its separate process is not
// (e2e/suites/hostile-code.test.ts runs the real one).

const props = (projectId: string) => ({ principal: "admin", projectId, origin: "/", depth: 0 });

async function project(): Promise<string> {
  const projectId = `prj_runscript${crypto.randomUUID().replaceAll("-", "")}`;
  await ensureContext(env, { projectId, path: "/", name: "test", parent: null, ancestors: [], caller: { principal: "admin", origin: "/" } });
  return projectId;
}

describe("runScript in this Worker's Loader (no runner bound)", () => {
  test("answers the script's result, its failure as SCRIPT_FAILED, and TIMEOUT past the deadline", async () => {
    expect(env.RUNNER).toBeUndefined();
    const projectId = await project();
    expect(await runScript(env, props(projectId), isolateItx(env, props(projectId)), "async (itx) => (await itx.whoami()).path")).toEqual({ status: "succeeded", result: "/" });
    expect(await runScript(env, props(projectId), isolateItx(env, props(projectId)), "async () => { throw new Error('no') }")).toMatchObject({ status: "failed", error: { code: "SCRIPT_FAILED" } });
    const slow = await runScript(env, props(projectId), isolateItx(env, props(projectId)), "async () => { await new Promise((done) => setTimeout(done, 5_000)); }", { timeoutMs: 200 });
    expect(slow).toMatchObject({ status: "failed", error: { code: "TIMEOUT" } });
  });
});

// What a script touches, counted here: its itx is this, so a call shows the script ran.
class Probe extends RpcTarget {
  calls = 0;
  touch(): number {
    return ++this.calls;
  }
}

function deferred(): { promise: Promise<void>; open(): void; refuse(error: Error): void } {
  let open!: () => void;
  let refuse!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    refuse = reject;
  });
  promise.catch(() => undefined);
  return { promise, open, refuse };
}

const touching = (tag: string) => `async (itx) => itx.touch() /* ${tag} ${crypto.randomUUID()} */`;

const settle = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe("a failure's message", () => {
  test("is cut to FAILURE_MESSAGE_MAX_LENGTH, so the event that settles its run always takes it", async () => {
    const projectId = await project();
    const outcome = await runScript(env, props(projectId), null, "async () => { throw new Error('x'.repeat(300_000)); }");
    if (outcome.status !== "failed") throw new Error(`expected a failure, got ${JSON.stringify(outcome).slice(0, 200)}`);
    expect(outcome.error.code).toBe("SCRIPT_FAILED");
    expect(outcome.error.message.length).toBeLessThan(LIMITS.FAILURE_MESSAGE_MAX_LENGTH + 200);
    expect(outcome.error.message).toMatch(/^x{16000}\.\.\. \(\d+ more characters cut: FAILURE_MESSAGE_MAX_LENGTH\)$/);
    // A short one is kept whole.
    expect(await runScript(env, props(projectId), null, "async () => { throw new Error('short'); }")).toEqual({ status: "failed", error: { code: "SCRIPT_FAILED", message: "short" } });
  });
});

describe.each([
  ["this Worker's Loader", () => env],
  ["the runner protocol", () => ({ ...env, RUNNER: (exports as unknown as { RunnerEntrypoint: RunnerBinding }).RunnerEntrypoint })],
])("runScript with a gate (%s)", (_road, roadEnv) => {
  test("the script starts only once the gate opens (its isolate loads meanwhile), and its deadline counts from then", async () => {
    const projectId = await project();
    const probe = new Probe();
    const gate = deferred();
    const running = runScript(roadEnv(), props(projectId), probe, touching("gated"), { timeoutMs: 300, gate: gate.promise });
    await settle(500);
    expect(probe.calls).toBe(0);
    gate.open();
    // Waiting 500 ms at the gate did not spend the 300 ms deadline.
    expect(await running).toEqual({ status: "succeeded", result: 1 });
    expect(probe.calls).toBe(1);
  });

  test("a gate that rejects (the request was refused) keeps the script from starting", async () => {
    const projectId = await project();
    const probe = new Probe();
    const gate = deferred();
    const running = runScript(roadEnv(), props(projectId), probe, touching("refused"), { gate: gate.promise });
    await settle(100);
    gate.refuse(new ItxError("LOOP_LIMIT", "refused for the test"));
    expect((await running).status).toBe("failed");
    await settle(100);
    expect(probe.calls).toBe(0);
  });

  test("the script's expression is evaluated by its first run, once per isolate; a throw there fails the run", async () => {
    const projectId = await project();
    const counter = `(() => { let n = 0; return async () => ++n; })() /* ${crypto.randomUUID()} */`;
    const gate = Promise.resolve();
    expect(await runScript(roadEnv(), props(projectId), null, counter, { gate })).toEqual({ status: "succeeded", result: 1 });
    expect(await runScript(roadEnv(), props(projectId), null, counter)).toEqual({ status: "succeeded", result: 2 });
    const throwing = await runScript(roadEnv(), props(projectId), null, `(() => { throw new Error("at evaluation"); })()`, { gate });
    expect(throwing).toMatchObject({ status: "failed", error: { code: "SCRIPT_FAILED", message: expect.stringContaining("at evaluation") } });
  });
});

// Last: its drain test leaves the runner refusing calls.
describe("runScript through the runner protocol", () => {
  const runner = (exports as unknown as { RunnerEntrypoint: RunnerBinding }).RunnerEntrypoint;
  const withRunner = { ...env, RUNNER: runner };

  test("answers the script's result and its own failure with the script's code kept apart from the platform's", async () => {
    const projectId = await project();
    expect(await runScript(withRunner, props(projectId), isolateItx(env, props(projectId)), "async (itx) => (await itx.whoami()).path + '!'")).toEqual({ status: "succeeded", result: "/!" });
    // A script that throws an error coded TIMEOUT failed by itself: SCRIPT_FAILED, not the runner's TIMEOUT.
    const thrown = await runScript(withRunner, props(projectId), isolateItx(env, props(projectId)), "async (itx) => itx.waitForEvent({ type: 'never', timeoutMs: 10 })");
    expect(thrown).toMatchObject({ status: "failed", error: { code: "SCRIPT_FAILED" } });
  });

  // The binding, with the sessions opened on it counted and their watches kept: disposing one is
  // what the OS sees when the runner's process dies (e2e/suites/runner-watchdog.test.ts kills a real one).
  function counted(): { binding: RunnerBinding; watches: RunnerSessionWatch[] } {
    const watches: RunnerSessionWatch[] = [];
    const binding = {
      session: (watch: RunnerSessionWatch) => {
        watches.push(watch);
        return runner.session(watch);
      },
      runScript: (...args: Parameters<RunnerBinding["runScript"]>) => runner.runScript(...args),
      ping: () => runner.ping(),
    } as unknown as RunnerBinding;
    return { binding, watches };
  }

  test("a held session carries every run of its owner, callbacks into each run's itx included", async () => {
    const projectId = await project();
    const { binding, watches } = counted();
    const held = new HeldRunner();
    const withSession = { ...env, RUNNER: binding };
    for (const n of [1, 2, 3]) {
      const outcome = await runScript(withSession, props(projectId), isolateItx(env, props(projectId)), `async (itx) => (await itx.whoami()).path + ${n}`, { held });
      expect(outcome).toEqual({ status: "succeeded", result: `/${n}` });
    }
    expect(watches).toHaveLength(1);
    // A script's own failure is an answer: the session stays.
    expect(await runScript(withSession, props(projectId), isolateItx(env, props(projectId)), "async () => { throw new Error('no') }", { held })).toMatchObject({ status: "failed", error: { code: "SCRIPT_FAILED" } });
    expect(await runScript(withSession, props(projectId), null, "async () => 4", { held })).toEqual({ status: "succeeded", result: 4 });
    expect(watches).toHaveLength(1);
    held.close();
  });

  test("a session whose runner is gone (its watch disposed) is not used again; a closed one sends runs on the binding", async () => {
    const projectId = await project();
    const { binding, watches } = counted();
    const held = new HeldRunner();
    const withSession = { ...env, RUNNER: binding };
    expect(await runScript(withSession, props(projectId), null, "async () => 1", { held })).toEqual({ status: "succeeded", result: 1 });
    watches[0]?.[Symbol.dispose]?.();
    expect(await runScript(withSession, props(projectId), null, "async () => 2", { held })).toEqual({ status: "succeeded", result: 2 });
    expect(watches).toHaveLength(2);
    held.close();
    expect(await runScript(withSession, props(projectId), isolateItx(env, props(projectId)), "async (itx) => (await itx.whoami()).path", { held })).toEqual({ status: "succeeded", result: "/" });
    expect(watches).toHaveLength(2);
  });

  test("past its deadline the runner answers TIMEOUT and then drains: it refuses new calls until it is replaced", async () => {
    const projectId = await project();
    const slow = await runScript(withRunner, props(projectId), isolateItx(env, props(projectId)), "async () => { await new Promise((done) => setTimeout(done, 5_000)); }", { timeoutMs: 200 });
    expect(slow).toMatchObject({ status: "failed", error: { code: "TIMEOUT" } });
    const load = { id: "script:probe", compatibilityDate: "2026-08-01", mainModule: "m.js", modules: { "m.js": "export default {}" }, limits: { cpuMs: 50 }, itxBinding: false };
    expect(await runner.runScript(load, null, "token", 1_000)).toMatchObject({ ok: false, refused: true });
    expect(await runner.ping()).toBe("draining");
  });
});
