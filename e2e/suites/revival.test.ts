import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { StreamEvent } from "iterate/types";
import { test } from "../harness/fixtures.ts";
import { until } from "../harness/poll.ts";
import { listenOnLoopback, type LoopbackServer } from "../harness/loopback-server.ts";
import { scriptReply, startModelServer, type ModelAnswer, type ModelRequest } from "../harness/model-server.ts";

const E = "events.iterate.com/";

/**
 * Background work (an agent's turn, a context's enqueued run) claimed by a host that then died with
 * the OS is driven again by the host's own alarm, armed as the work was claimed; a delivery cut off
 * mid-batch is sent again by the stream's own alarm (DELIVERY_BACKSTOP_MS): nothing has to touch
 * the stream after the restart. Each test leaves the revived host alone until the
 * outcome is visible from outside (the model server sees the turn's second request) or a fixed
 * wait has passed (the run), and only then reads the stream: a read made the host wake before
 * this fix, so a test that read first would pass without it.
 */

// One loopback model for the file. A model's first request hangs until the file ends: the turn is
// under way in its host when the test kills the OS.
const hanging: Array<() => void> = [];
let model: Awaited<ReturnType<typeof startModelServer>>;
// The offsets a watched processor's batches reported, in order; the first report hangs like the model's first request.
const hits: string[] = [];
let watcher: LoopbackServer;
const answers = new Map<string, (request: ModelRequest, index: number) => ModelAnswer | Promise<ModelAnswer>>();

beforeAll(async () => {
  model = await startModelServer((request, index) => {
    const answer = answers.get(request.model);
    if (!answer) return { status: 404, body: JSON.stringify({ error: { message: `no answer for model ${request.model}` } }) };
    return answer(request, index);
  });
});
beforeAll(async () => {
  watcher = await listenOnLoopback(
    createServer((request, response) => {
      hits.push(new URL(request.url ?? "/", "http://watcher").searchParams.get("offset") ?? "");
      if (hits.length === 1) {
        hanging.push(() => response.end("late"));
        return;
      }
      response.end("ok");
    }),
  );
});
afterAll(async () => {
  for (const release of hanging) release();
  await model.close();
  await watcher.close();
});

function requestsOf(name: string): ModelRequest[] {
  return model.requests.filter((request) => request.model === name);
}

describe("background work across a restart, with nothing touching its stream", () => {
  test("an agent turn cut off mid model call is answered after the restart: the host's alarm wakes it", { timeout: 900_000 }, async ({ restartable }) => {
    const name = `reviver-${Math.random().toString(36).slice(2, 8)}`;
    answers.set(name, (request) => {
      if (requestsOf(name).indexOf(request) === 0) {
        return new Promise<ModelAnswer>((resolve) => hanging.push(() => resolve({ status: 503, body: "{}" })));
      }
      return scriptReply('async (itx) => { await itx.chat.sendMessage("revived"); }');
    });
    const project = restartable.session().projects.create({ slug: "agent-revival" });
    const { projectId } = await project.whoami();
    const agent = project.agents.get("/agents/reviver");
    await agent.create({ llm: { provider: "openai-compatible", baseUrl: model.baseUrl, model: name } });
    await agent.message("Please say something");
    await until(async () => (requestsOf(name).length > 0 ? true : undefined), { timeoutMs: 60_000 });

    await restartable.kill();
    await restartable.start();
    // Untouched since the restart: only the agent host's own alarm can bring the turn back.
    await until(async () => (requestsOf(name).length > 1 ? true : undefined), { timeoutMs: 120_000, intervalMs: 250 });

    const itx = restartable.project(projectId);
    const stream = await itx.streams.get("/agents/reviver");
    const sent = await until(async () => (await stream.getEvents({ types: [`${E}agent/message-sent`] }))[0], { timeoutMs: 60_000 });
    expect(sent.payload).toEqual({ text: "revived" });
    // The request the dead host made is the one answered: the turn is not asked for twice.
    const requested = await stream.getEvents({ types: [`${E}agent/llm-request-requested`] });
    expect(requested).toHaveLength(1);
    const settled = (await stream.getEvents({ types: [`${E}agent/llm-request-settled`] })) as Array<StreamEvent<string, { requestOffset: number; status: string }>>;
    expect(settled.map((event) => event.payload)).toEqual([expect.objectContaining({ requestOffset: requested[0]?.offset, status: "succeeded" })]);
    expect(requestsOf(name)).toHaveLength(2);
  });

  test("an enqueued run cut off mid-run is settled after the restart without a read or write of its context", { timeout: 900_000 }, async ({ restartable }) => {
    const project = restartable.session().projects.create({ slug: "run-revival" });
    const { projectId } = await project.whoami();
    // A context of its own: the project's root has its own host whose alarm (creation's watchdog)
    // would wake the root's stream, and through it the root context's host.
    const context = await project.extend({ path: "/jobs" });
    const pill = `async (itx) => { await itx.append({ type: "test/pill-started" }); await new Promise(() => setTimeout(() => {}, 600_000)); }`;
    const [requested] = await context.append({ type: `${E}itx/run-requested`, payload: { script: pill, enqueued: true } });
    if (requested === undefined) throw new Error("append answered no event");
    await context.waitForEvent({ type: "test/pill-started", afterOffset: requested.offset, timeoutMs: 30_000 });

    await restartable.kill();
    await restartable.start();
    // The alarm stood 5 s (REVIVAL_CHECK_MS) after the claim; the revived claim waits its 1 s backoff.
    // Nothing reaches /jobs in this wait; the one read after it finds the run already settled.
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    const stream = restartable.project(projectId).streams.get("/jobs");
    const settled = (await stream.getEvents({ types: [`${E}itx/run-settled`] })) as Array<StreamEvent<string, { requestOffset: number; status: string; error?: { code: string } }>>;
    expect(settled.map((event) => event.payload)).toEqual([
      { requestOffset: requested.offset, status: "failed", error: expect.objectContaining({ code: "RESOURCE_EXHAUSTED" }) },
    ]);
  });

  test("a delivery cut off mid-batch reaches its processor after the restart: the stream's alarm wakes it", { timeout: 900_000 }, async ({ restartable }) => {
    const { projectId } = await restartable.session().projects.create({ slug: "delivery-revival" }).whoami();
    const itx = restartable.project(projectId);
    // A config-repo processor whose host reports each watched event's batch to the loopback
    // server before folding it: the first report hangs, so the batch is in flight when the OS dies.
    const worker = `
import { IterateConfigEntrypoint, StreamProcessorDurableObject } from "iterate/sdk";
import { StreamProcessor, defineProcessorContract } from "iterate/stream/processor";

class Tally extends StreamProcessor {
  contract = defineProcessorContract({ slug: "tally", version: "1.0.0", initialState: () => ({ events: 0 }) });
  reduce({ state }) { return { events: state.events + 1 }; }
}
export class WatchedDurableObject extends StreamProcessorDurableObject {
  processor = new Tally();
  async processorBatch(events) {
    for (const event of events) if (event.type === "test/watched") await fetch(${JSON.stringify(watcher.origin)} + "/hit?offset=" + event.offset);
    return super.processorBatch(events);
  }
}
export default class extends IterateConfigEntrypoint {
  async fetch() { return new Response("ok"); }
}
`;
    const { commit } = await itx.repo.commit({ message: "a watched processor", files: { "worker.ts": worker } });
    await itx.waitForEvent({ type: `${E}project/worker-updated`, payload: { commit }, timeoutMs: 240_000 });
    const inbox = itx.cd("/inbox");
    await inbox.processor.subscribe({ key: "watched", className: "WatchedDurableObject" });
    const [watched] = await inbox.append({ type: "test/watched" });
    if (watched === undefined) throw new Error("append answered no event");
    await until(async () => (hits.length > 0 ? true : undefined), { timeoutMs: 120_000 });

    await restartable.kill();
    await restartable.start();
    // Untouched since the restart: only /inbox's own alarm can send the batch again.
    await until(async () => (hits.length > 1 ? true : undefined), { timeoutMs: 120_000, intervalMs: 250 });
    expect(hits.slice(0, 2)).toEqual([String(watched.offset), String(watched.offset)]);
    const folded = await until(
      async () => (await restartable.project(projectId).cd("/inbox").processor.snapshot("watched")) as { offset: number; state: { events: number } },
      (snapshot) => snapshot.offset >= watched.offset,
      { timeoutMs: 60_000 },
    );
    // Every event up to there folded once: the batch sent again was not folded twice.
    expect(folded.state.events).toBe(folded.offset);
  });
});
