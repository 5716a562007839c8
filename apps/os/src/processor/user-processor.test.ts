import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import type { StreamEvent, UserProcessorSnapshot } from "iterate/types";
import { expectCode } from "iterate/stream/test-support";
import { throwCoded, unwrapCoded } from "../api/coded-result.ts";
import { LIMITS } from "../limits.ts";
import { PROJECT_WORKER_UPDATED } from "../project/project-events.ts";
import { createProject } from "../project/project-lifecycle.ts";
import { repoStub } from "../repo/repo-stub.ts";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import { ProcessorRpcTarget } from "./processor-rpc-target.ts";
import { userProcessorHostName } from "./user-processor-address.ts";
import { SUBSCRIPTION_DELIVERY_HALTED, type WokenUserProcessor } from "./user-processor-durable-object.ts";

let counter = 0;
const slug = (what: string) => `${what}-${Date.now().toString(36)}-${++counter}`;
const caller = { principal: "tester", origin: "/" };

const stream = (projectId: string, path: string) => new StreamRpcTarget(streamStub(env.STREAM, `${projectId}:${path}`), caller);
const processors = (projectId: string, path: string) => new ProcessorRpcTarget({ env, where: async () => ({ projectId, path }), caller });

/**
 * A config worker exporting two processors: Hoarder keeps `test/blob` payloads (prefixed with
 * `tag`, throwing on a poisoned one when `poison` is set), Tally counts every event.
 */
const processorWorker = ({ tag, version = "1.0.0", poison = false }: { tag: string; version?: string; poison?: boolean }) => `
import { IterateConfigEntrypoint, StreamProcessorDurableObject } from "iterate/sdk";
import { StreamProcessor, defineProcessorContract } from "iterate/stream/processor";

const HoarderContract = defineProcessorContract({ slug: "hoarder", version: ${JSON.stringify(version)}, consumes: ["test/blob"], initialState: () => ({ blobs: [] }) });
class Hoarder extends StreamProcessor {
  contract = HoarderContract;
  reduce({ event, state }) {
    if (${poison} && event.payload.poison) throw new Error("poisoned at " + event.offset);
    return { blobs: [...state.blobs, ${JSON.stringify(tag)} + event.payload.blob] };
  }
}
export class HoarderDurableObject extends StreamProcessorDurableObject { processor = new Hoarder(); }

const TallyContract = defineProcessorContract({ slug: "tally", version: "1.0.0", initialState: () => ({ events: 0 }) });
class Tally extends StreamProcessor {
  contract = TallyContract;
  reduce({ state }) { return { events: state.events + 1 }; }
}
export class TallyDurableObject extends StreamProcessorDurableObject { processor = new Tally(); }

const BalloonContract = defineProcessorContract({ slug: "balloon", version: "1.0.0", consumes: ["test/inflated"], initialState: () => ({ air: "" }) });
class Balloon extends StreamProcessor {
  contract = BalloonContract;
  reduce({ state }) { return { air: state.air + "x".repeat(600000) }; }
}
export class BalloonDurableObject extends StreamProcessorDurableObject { processor = new Balloon(); }

export default class extends IterateConfigEntrypoint {
  async fetch() { return new Response("ok"); }
}
`;

// The first bundler build of a test run compiles esbuild's wasm: on a loaded machine, tens of seconds.
async function commitWorker(projectId: string, code: string): Promise<void> {
  const root = stream(projectId, "/");
  const after = await root.head();
  const { commit } = unwrapCoded(await repoStub(env, projectId, "/repos/config").commit({ message: "processors", files: { "worker.ts": code } }, caller));
  const deadline = Date.now() + 200_000;
  for (;;) {
    try {
      await root.waitForEvent({ type: PROJECT_WORKER_UPDATED, payload: { commit }, afterOffset: after, timeoutMs: 30_000 });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
  }
}

/** Polls the processor's snapshot until it has folded up to `offset`. */
async function foldedTo(projectId: string, path: string, key: string, offset: number, timeoutMs = 60_000): Promise<UserProcessorSnapshot> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const snapshot = await processors(projectId, path).snapshot(key);
    if (snapshot.offset >= offset || Date.now() > deadline) return snapshot;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const blob = (value: string, extra: Record<string, unknown> = {}) => ({ type: "test/blob", payload: { blob: value, ...extra } });

describe("config-repo processors", () => {
  test("fold their stream exactly once, keep their state across host deaths, and run the newest commit's code", async () => {
    const { projectId } = await createProject(env, slug("fold"), "tester");
    await commitWorker(projectId, processorWorker({ tag: "v1:" }));
    const inbox = stream(projectId, "/inbox");
    await inbox.append(blob("a"), { type: "test/other" }, blob("b"));

    const subscribed = await processors(projectId, "/inbox").subscribe({ key: "hoarder", className: "HoarderDurableObject" });
    expect(subscribed).toMatchObject({ key: "hoarder", stream: "/inbox" });
    await inbox.append(blob("c"));
    const head = await inbox.head();
    let snapshot = await foldedTo(projectId, "/inbox", "hoarder", head);
    // Events from before the subscription are folded too, in order, each once.
    expect(snapshot).toMatchObject({ offset: head, state: { blobs: ["v1:a", "v1:b", "v1:c"] }, version: "1.0.0", className: "HoarderDurableObject" });
    expect(await processors(projectId, "/inbox").list()).toEqual([expect.objectContaining({ key: "hoarder", className: "HoarderDurableObject", failures: 0 })]);

    // Delivered twice (a host that restarted, a stream that retried): folded once.
    const host = env.USER_PROCESSOR.getByName(userProcessorHostName({ projectId, path: "/inbox", key: "hoarder", className: "HoarderDurableObject" }));
    const events = (await inbox.getEvents({ afterOffset: 0 })) as StreamEvent[];
    const woken = throwCoded<WokenUserProcessor>(await host.wakeStreamProcessor({ name: "hoarder", coordinate: `${projectId}:/inbox` }));
    expect(woken.checkpoint).toBe(head);
    expect(await woken.processEventBatch(events)).toEqual({ offset: head });
    // An idle stream lets its session go: the host drops what it loaded (a copy of the worker) and
    // loads it again for the next batch. Without a release the stream kept both objects in memory.
    expect(await woken.release()).toBe(true);
    expect(await woken.processEventBatch(events)).toEqual({ offset: head });
    // The host dies: its replacement finds the state the facet committed.
    await runInDurableObject(host, (_instance, state) => state.abort("test: the host dies")).catch(() => undefined);
    snapshot = await processors(projectId, "/inbox").snapshot("hoarder");
    expect(snapshot.state).toEqual({ blobs: ["v1:a", "v1:b", "v1:c"] });

    // A commit changes the code: the next event is folded by it, onto the state the old code left.
    await commitWorker(projectId, processorWorker({ tag: "v2:" }));
    await inbox.append(blob("d"));
    snapshot = await foldedTo(projectId, "/inbox", "hoarder", await inbox.head());
    expect(snapshot.state).toEqual({ blobs: ["v1:a", "v1:b", "v1:c", "v2:d"] });

    // A new contract version rebuilds: the whole stream is folded again by the new code.
    await commitWorker(projectId, processorWorker({ tag: "v3:", version: "2.0.0" }));
    await inbox.append(blob("e"));
    snapshot = await foldedTo(projectId, "/inbox", "hoarder", await inbox.head());
    expect(snapshot).toMatchObject({ version: "2.0.0", state: { blobs: ["v3:a", "v3:b", "v3:c", "v3:d", "v3:e"] } });

    expect(await processors(projectId, "/inbox").unsubscribe("hoarder")).toBe(true);
    expect(await processors(projectId, "/inbox").unsubscribe("hoarder")).toBe(false);
    await expectCode(() => processors(projectId, "/inbox").snapshot("hoarder"), "NOT_FOUND");
  }, 400_000);

  test("a processor that keeps throwing halts after USER_PROCESSOR_FAILURES_MAX failures without stalling the stream, and a fix resumes it", async () => {
    const { projectId } = await createProject(env, slug("poison"), "tester");
    await commitWorker(projectId, processorWorker({ tag: "", poison: true }));
    const inbox = stream(projectId, "/inbox");
    await processors(projectId, "/inbox").subscribe({ key: "hoarder", className: "HoarderDurableObject" });
    await processors(projectId, "/inbox").subscribe({ key: "tally", className: "TallyDurableObject" });
    const [poisoned] = await inbox.append(blob("ok"), blob("bad", { poison: true }), blob("after"));

    const halted = (await inbox.waitForEvent({ type: SUBSCRIPTION_DELIVERY_HALTED, timeoutMs: 120_000 })) as StreamEvent;
    expect(halted.payload).toMatchObject({ key: "processor:hoarder", className: "HoarderDurableObject", failures: LIMITS.USER_PROCESSOR_FAILURES_MAX });
    expect(halted.source.platform).toBe("processor");
    // The stream and the other processor went on meanwhile.
    await inbox.append({ type: "test/other" });
    const head = await inbox.head();
    expect((await foldedTo(projectId, "/inbox", "tally", head)).state).toEqual({ events: head });
    const stuck = await processors(projectId, "/inbox").snapshot("hoarder");
    expect(stuck.state).toEqual({ blobs: ["ok"] });
    expect(stuck.halted).toMatchObject({ offset: (poisoned?.offset ?? 0) + 1 });

    // A fix, committed: the halted processor resumes where it stopped.
    await commitWorker(projectId, processorWorker({ tag: "" }));
    const resumed = await foldedTo(projectId, "/inbox", "hoarder", head, 120_000);
    expect(resumed.state).toEqual({ blobs: ["ok", "bad", "after"] });
    expect(resumed.halted).toBeUndefined();
  }, 400_000);

  test("who may subscribe what, and confinement between projects", async () => {
    const a = await createProject(env, slug("conf-a"), "tester");
    const b = await createProject(env, slug("conf-b"), "tester");
    await commitWorker(a.projectId, processorWorker({ tag: "" }));
    await expectCode(() => processors(a.projectId, "/x").subscribe({ key: "nope", className: "NoSuchDurableObject" }), "INVALID_ARGUMENT");
    await expectCode(() => processors(a.projectId, "/x").subscribe({ key: "Bad Key", className: "HoarderDurableObject" }), "INVALID_ARGUMENT");
    await expectCode(() => processors(a.projectId, "/x").subscribe({ key: "k", className: "HoarderDurableObject", extra: 1 }), "INVALID_ARGUMENT");
    await processors(a.projectId, "/x").subscribe({ key: "hoarder", className: "HoarderDurableObject" });

    // Project b sees no processor of a's, and cannot wake a's host onto its own stream.
    await expectCode(() => processors(b.projectId, "/x").snapshot("hoarder"), "NOT_FOUND");
    const aHost = env.USER_PROCESSOR.getByName(userProcessorHostName({ projectId: a.projectId, path: "/x", key: "hoarder", className: "HoarderDurableObject" }));
    await expectCode(async () => throwCoded(await aHost.wakeStreamProcessor({ name: "hoarder", coordinate: `${b.projectId}:/x` })), "NOT_FOUND");
    await expectCode(async () => throwCoded(await aHost.wakeStreamProcessor({ name: "hoarder", coordinate: `${a.projectId}:/y` })), "NOT_FOUND");

    // Ordinary writers cannot write the rows or the halt.
    const row = { key: "processor:x", subscription: { type: "processor", binding: "USER_PROCESSOR", host: userProcessorHostName({ projectId: a.projectId, path: "/x", key: "x", className: "HoarderDurableObject" }), processor: "x" } };
    await expectCode(() => stream(a.projectId, "/x").append({ type: "events.iterate.com/itx/subscription-configured", payload: row }), "PERMISSION_DENIED");
    await expectCode(() => stream(a.projectId, "/x").append({ type: SUBSCRIPTION_DELIVERY_HALTED, payload: {} }), "PERMISSION_DENIED");
  }, 300_000);

  test("a stream feeds at most USER_PROCESSORS_PER_STREAM_MAX config-repo processors; a state past USER_PROCESSOR_SNAPSHOT_MAX_CHARS is not relayed", async () => {
    const { projectId } = await createProject(env, slug("many"), "tester");
    await commitWorker(projectId, processorWorker({ tag: "" }));
    const target = processors(projectId, "/many");
    for (let index = 0; index < LIMITS.USER_PROCESSORS_PER_STREAM_MAX; index++) await target.subscribe({ key: `p${index}`, className: "TallyDurableObject" });
    const refused = await expectCode(() => target.subscribe({ key: "one-more", className: "TallyDurableObject" }), "INVALID_ARGUMENT");
    expect(refused.details).toMatchObject({ limit: "USER_PROCESSORS_PER_STREAM_MAX" });
    // Replacing an existing row is not one more.
    await target.subscribe({ key: "p0", className: "HoarderDurableObject" });

    const balloon = processors(projectId, "/balloon");
    await balloon.subscribe({ key: "balloon", className: "BalloonDurableObject" });
    const [first] = await stream(projectId, "/balloon").append({ type: "test/inflated" });
    const inflated = await foldedTo(projectId, "/balloon", "balloon", first?.offset ?? 1);
    expect((inflated.state as { air: string }).air).toHaveLength(600_000);
    await stream(projectId, "/balloon").append({ type: "test/inflated" });
    const deadline = Date.now() + 60_000;
    let tooBig: Awaited<ReturnType<typeof expectCode>> | undefined;
    while (!tooBig && Date.now() < deadline) {
      tooBig = await expectCode(() => balloon.snapshot("balloon"), "LIMIT_EXCEEDED").catch(() => undefined);
      if (!tooBig) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(tooBig?.details).toMatchObject({ limit: "USER_PROCESSOR_SNAPSHOT_MAX_CHARS" });
  }, 300_000);
});
