import { env, exports } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { ensureContext } from "../itx/context-lifecycle.ts";
import { isolateItx } from "../itx/itx-rpc-target.ts";
import { runScript } from "../worker-loader/run-script.ts";
import type { RunnerBinding } from "../worker-loader/runner-client.ts";
import runnerWorker from "./runner-worker.ts";

// The watchdog's recycle (RUNNER_RSS_RECYCLE_MB) seen from the runner: POST /drain with the
// control secret, while a call is in flight. The runner is a loopback of this worker here (its
// module state is this file's own); the real process is e2e/suites/runner-watchdog.test.ts's.

const runner = (exports as unknown as { RunnerEntrypoint: RunnerBinding }).RunnerEntrypoint;
const withRunner = { ...env, RUNNER: runner };
const runnerEnv = { DRAIN_MAX_MS: 10_000, CONTROL_TOKEN: "the-watchdog's-secret" } as unknown as Parameters<typeof runnerWorker.fetch>[1];
const drain = (token: string) =>
  runnerWorker.fetch(new Request("http://runner/drain", { method: "POST", headers: { "x-runner-control": token }, body: "it held 1600 MB (RUNNER_RSS_RECYCLE_MB)" }), runnerEnv);
const health = async () => (await runnerWorker.fetch(new Request("http://runner/health"), runnerEnv)).text();

describe("a recycle drain", () => {
  test("lets the call in flight finish and new ones start; once none is in flight the runner drains", async () => {
    const projectId = `prj_recycle${crypto.randomUUID().replaceAll("-", "")}`;
    await ensureContext(env, { projectId, path: "/", name: "test", parent: null, ancestors: [], caller: { principal: "admin", origin: "/" } });
    const props = { principal: "admin", projectId, origin: "/", depth: 0 };
    expect((await drain("a guess")).status).toBe(403);
    const slow = runScript(withRunner, props, isolateItx(env, props), "async () => { await new Promise((done) => setTimeout(done, 400)); return 'finished'; }");
    await new Promise((settle) => setTimeout(settle, 100));
    expect(await (await drain("the-watchdog's-secret")).text()).toBe("draining when idle");
    // Still taking calls while one is in flight: nothing is cut short, nothing waits.
    expect(await runner.ping()).toBe("ready");
    expect(await health()).toBe("ok");
    expect(await slow).toEqual({ status: "succeeded", result: "finished" });
    // The last call ended: the runner drained, refuses new calls and fails /health for the watchdog.
    expect(await runner.ping()).toBe("draining");
    expect(await health()).toBe("drained: it held 1600 MB (RUNNER_RSS_RECYCLE_MB)");
  });
});
