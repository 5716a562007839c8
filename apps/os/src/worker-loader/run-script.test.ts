import { env, exports } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { ensureContext } from "../itx/context-lifecycle.ts";
import { runScript } from "./run-script.ts";
import type { RunnerBinding } from "./runner-client.ts";
import { isolateItx } from "../itx/itx-rpc-target.ts";

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
    const slow = await runScript(env, props(projectId), isolateItx(env, props(projectId)), "async () => { await new Promise((done) => setTimeout(done, 5_000)); }", 200);
    expect(slow).toMatchObject({ status: "failed", error: { code: "TIMEOUT" } });
  });
});

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

  test("past its deadline the runner answers TIMEOUT and then drains: it refuses new calls until it is replaced", async () => {
    const projectId = await project();
    const slow = await runScript(withRunner, props(projectId), isolateItx(env, props(projectId)), "async () => { await new Promise((done) => setTimeout(done, 5_000)); }", 200);
    expect(slow).toMatchObject({ status: "failed", error: { code: "TIMEOUT" } });
    const load = { id: "script:probe", compatibilityDate: "2026-08-01", mainModule: "m.js", modules: { "m.js": "export default {}" }, limits: { cpuMs: 50 }, itxBinding: false };
    expect(await runner.runScript(load, null, "token", 1_000)).toMatchObject({ ok: false, refused: true });
    expect(await runner.ping()).toBe("draining");
  });
});
