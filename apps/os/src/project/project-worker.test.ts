import { env } from "cloudflare:workers";
import { describe, expect, test, vi } from "vitest";
import type { StreamEvent, WaitForEventInput } from "iterate/types";
import { expectCode } from "iterate/stream/test-support";
import { throwCoded, unwrapCoded } from "../api/coded-result.ts";
import { repoStub } from "../repo/repo-stub.ts";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import { CONFIG_TEMPLATE_FILES } from "./config-template.generated.ts";
import { createProject } from "./project-lifecycle.ts";
import { PROJECT_FEED_ATTEMPTS_MAX } from "./project-processor.ts";
import { FEED_QUEUE_MAX } from "./project-contract.ts";
import { LOG_LINES_PER_WINDOW } from "../logging/log-limiter.ts";
import { LIMITS } from "../limits.ts";
import { waitLong as waitLongOn } from "../../test/wait-long.ts";
import { PROJECT_WORKER_UPDATE_FAILED, PROJECT_WORKER_UPDATED } from "./project-events.ts";

let counter = 0;
const slug = (what: string) => `${what}-${Date.now().toString(36)}-${++counter}`;
const caller = { principal: "tester", origin: "/" };

function root(projectId: string): StreamRpcTarget {
  return new StreamRpcTarget(streamStub(env.STREAM, `${projectId}:/`), { platform: "stream" });
}

async function homepage(projectId: string): Promise<{ status: number; text: string }> {
  const response = await env.PROJECT.getByName(`${projectId}:/`).serveHttp(new Request("http://x/"));
  return { status: response.status, text: await response.text() };
}

const worker = (greeting: string) => `import { IterateConfigEntrypoint } from "iterate/sdk";
export default class extends IterateConfigEntrypoint {
  async fetch() { return new Response(${JSON.stringify(greeting)} + " " + this.projectSlug()); }
  async whereFrom() { return this.callerPath(); }
}
`;

const waitLong = (projectId: string, query: Omit<WaitForEventInput, "timeoutMs">): Promise<StreamEvent> => waitLongOn(root(projectId), query);

describe("the project worker follows /repos/config", () => {
  test("a commit becomes the worker; a broken one fails while the previous worker serves", async () => {
    const record = await createProject(env, slug("follow"), "tester");
    const repo = repoStub(env, record.projectId, "/repos/config");
    const after = await root(record.projectId).head();
    const committed = unwrapCoded(await repo.commit({ message: "hello", files: { "worker.ts": worker("Hello from") } }, caller));
    const updated = await waitLong(record.projectId, { type: PROJECT_WORKER_UPDATED, afterOffset: after });
    expect(updated.payload).toMatchObject({ commit: committed.commit });
    expect(await homepage(record.projectId)).toEqual({ status: 200, text: `Hello from ${record.slug}` });
    // itx.worker: a method the worker exposes, called from another context, which it can name.
    const host = env.PROJECT.getByName(`${record.projectId}:/`);
    expect(throwCoded(await host.callWorker({ path: ["whereFrom"], args: [], callerPath: "/child" }))).toBe("/child");
    await expectCode(async () => throwCoded(await host.callWorker({ path: ["processEvent"], args: [{}], callerPath: "/child" })), "NOT_FOUND");

    const before = await root(record.projectId).head();
    const broken = unwrapCoded(await repo.commit({ message: "oops", files: { "worker.ts": "export default class { fetch( {" } }, caller));
    const failed = await waitLong(record.projectId, { type: PROJECT_WORKER_UPDATE_FAILED, afterOffset: before });
    expect(failed.payload).toMatchObject({ commit: broken.commit, error: expect.stringContaining("worker.ts") });
    expect(await homepage(record.projectId)).toEqual({ status: 200, text: `Hello from ${record.slug}` });
  }, 300_000);

  test("after creation the template creates the onboarding agent and sets the heartbeat", async () => {
    const record = await createProject(env, slug("onboard"), "tester");
    const agentStream = new StreamRpcTarget(streamStub(env.STREAM, `${record.projectId}:/agents/onboarding`), { platform: "stream" });
    const created: StreamEvent = await agentStream.waitForEvent({ type: "events.iterate.com/agent/created", timeoutMs: 15_000 });
    expect(created.source.origin).toBe("/");
    const set = await root(record.projectId).waitForEvent({ type: "events.iterate.com/itx/schedule-set", timeoutMs: 15_000 });
    expect(set.payload).toMatchObject({ key: "heartbeat", every: 900 });
  }, 40_000);

  test("the heartbeat works from the config worker: its script appends project/heartbeat-triggered as the worker, and the worker receives it at least once", async () => {
    const record = await createProject(env, slug("heartbeat"), "tester");
    // The template's heartbeat, at test speed, and a handler that leaves a trace.
    const heartbeatWorker = `import { IterateConfigEntrypoint } from "iterate/sdk";
export default class extends IterateConfigEntrypoint {
  async processEvent(event) {
    using itx = this.getItx();
    if (event.type === "events.iterate.com/project/worker-updated") {
      await itx.scheduler.set({ key: "heartbeat", every: 1, script: 'async (itx) => { await itx.append({ type: "events.iterate.com/project/heartbeat-triggered", payload: { scheduleKey: "heartbeat" } }); }' });
    }
    if (event.type === "events.iterate.com/project/heartbeat-triggered") {
      await itx.append({ type: "test/heartbeat-handled", payload: { offset: event.offset } });
      throw new Error("the heartbeat handler failed");
    }
  }
  async fetch() { return new Response("ok"); }
}
`;
    const after = await root(record.projectId).head();
    unwrapCoded(await repoStub(env, record.projectId, "/repos/config").commit({ message: "fast heartbeat", files: { "worker.ts": heartbeatWorker } }, caller));
    await waitLong(record.projectId, { type: PROJECT_WORKER_UPDATED, afterOffset: after });
    const triggered = await waitLong(record.projectId, { type: "events.iterate.com/project/heartbeat-triggered", afterOffset: after });
    // Written by the schedule's script as the worker (the root, as the project's creator), not by the platform.
    expect(triggered.source).toMatchObject({ origin: "/", principal: "tester" });
    expect(triggered.source.platform).toBeUndefined();
    // The worker received that very event (the feed hands it each lifecycle event after its start).
    const handled = await waitLong(record.projectId, { type: "test/heartbeat-handled", afterOffset: triggered.offset, payload: { offset: triggered.offset } });
    expect(handled.source.origin).toBe("/");
    // At least once: a worker that throws gets the event again, PROJECT_FEED_ATTEMPTS_MAX times in all, then the feed moves on.
    const delivered = await waitLong(record.projectId, { type: "events.iterate.com/project/worker-event-delivered", afterOffset: triggered.offset, payload: { offset: triggered.offset } });
    expect(delivered.payload).toMatchObject({ attempts: PROJECT_FEED_ATTEMPTS_MAX, error: expect.stringContaining("the heartbeat handler failed") });
    const tries = (await root(record.projectId).getEvents({ afterOffset: triggered.offset, types: ["test/heartbeat-handled"], limit: 500 })) as StreamEvent[];
    expect(tries.filter((event) => (event.payload as { offset: number }).offset === triggered.offset)).toHaveLength(PROJECT_FEED_ATTEMPTS_MAX);
    await env.SCHEDULER.getByName(`${record.projectId}:/`).cancel({ key: "heartbeat", caller });
  }, 300_000);

  test("a worker that throws on every heartbeat cannot make the OS print a line per event: its failures pass the log limiter", async () => {
    // project/heartbeat-triggered is open to every writer of the project, so anyone in it can feed
    // the worker as many as they like; each failed delivery is a fact (worker-event-delivered with
    // its error), and what the OS prints of them is held to LOG_LINES_PER_WINDOW per LOG_WINDOW_MS.
    const record = await createProject(env, slug("noisy"), "tester");
    const marker = `noisy-worker-${record.projectId}`;
    const noisyWorker = `import { IterateConfigEntrypoint } from "iterate/sdk";
export default class extends IterateConfigEntrypoint {
  async processEvent(event) {
    if (event.type === "events.iterate.com/project/heartbeat-triggered") throw new Error(${JSON.stringify(marker)});
  }
  async fetch() { return new Response("ok"); }
}
`;
    const after = await root(record.projectId).head();
    unwrapCoded(await repoStub(env, record.projectId, "/repos/config").commit({ message: "noisy", files: { "worker.ts": noisyWorker } }, caller));
    await waitLong(record.projectId, { type: PROJECT_WORKER_UPDATED, afterOffset: after });
    const printed: number[] = [];
    const watch = (...args: unknown[]) => {
      if (args.some((arg) => String(arg).includes(marker) || JSON.stringify(arg ?? null).includes(marker))) printed.push(Date.now());
    };
    const spies = [vi.spyOn(console, "warn").mockImplementation(watch), vi.spyOn(console, "error").mockImplementation(watch), vi.spyOn(console, "log").mockImplementation(watch)];
    try {
      const heartbeats = Array.from({ length: FEED_QUEUE_MAX }, () => ({ type: "events.iterate.com/project/heartbeat-triggered", payload: { scheduleKey: "attack" } }));
      const appended = await root(record.projectId).append(...heartbeats);
      const last = appended.at(-1)?.offset ?? 0;
      const delivered = await waitLong(record.projectId, { type: "events.iterate.com/project/worker-event-delivered", afterOffset: last, payload: { offset: last } });
      expect(delivered.payload).toMatchObject({ attempts: PROJECT_FEED_ATTEMPTS_MAX, error: expect.stringContaining(marker) });
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    // The limiter's windows are fixed (each opens at its first line), so any stretch of LOG_WINDOW_MS
    // overlaps at most two: the end of one, the next one's lines and its summary line. Without the
    // limiter every failed attempt of every event would print.
    expect(printed.length).toBeGreaterThan(0);
    for (const [index, at] of printed.entries()) {
      expect(printed.filter((time) => time >= at && time < at + LIMITS.LOG_WINDOW_MS).length, `lines from ${index}`).toBeLessThanOrEqual(2 * LOG_LINES_PER_WINDOW + 1);
    }
  }, 300_000);

  test("the template's files are what the config repo is seeded with", async () => {
    const record = await createProject(env, slug("seeded"), "tester");
    const files = unwrapCoded(await repoStub(env, record.projectId, "/repos/config").listFiles({}));
    expect(files.toSorted()).toEqual(Object.keys(CONFIG_TEMPLATE_FILES).toSorted());
  });
});
