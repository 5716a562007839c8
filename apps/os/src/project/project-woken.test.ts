import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import type { StreamEvent, WaitForEventInput } from "iterate/types";
import { expectCode } from "iterate/stream/test-support";
import { unwrapCoded } from "../api/coded-result.ts";
import { repoStub } from "../repo/repo-stub.ts";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import { mintProjectId } from "./project-directory.ts";
import { createProject } from "./project-lifecycle.ts";
import { waitLong as waitLongOn } from "../../test/wait-long.ts";
import { PROJECT_WORKER_EVENT_DELIVERED, PROJECT_WORKER_UPDATED, STREAM_WOKEN } from "./project-events.ts";

let counter = 0;
const slug = (what: string) => `${what}-${Date.now().toString(36)}-${++counter}`;
const caller = { principal: "tester", origin: "/" };

function stream(coordinate: string, stamp: ConstructorParameters<typeof StreamRpcTarget>[1] = { platform: "stream" }): StreamRpcTarget {
  return new StreamRpcTarget(streamStub(env.STREAM, coordinate), stamp);
}

// A new incarnation: the object dies, and the next call to it constructs it again.
async function restart(coordinate: string): Promise<void> {
  await runInDurableObject(env.STREAM.getByName(coordinate), (_instance, state) => state.abort("test: a new incarnation")).catch(() => undefined);
}

async function ofType(coordinate: string, type: string): Promise<StreamEvent[]> {
  return stream(coordinate).getEvents({ types: [type], limit: 500 });
}

// On woken the worker records what it saw, and what became of its own attempt to forge one.
const WOKEN_WORKER = `import { IterateConfigEntrypoint } from "iterate/sdk";
export default class extends IterateConfigEntrypoint {
  async processEvent(event) {
    if (event.type !== "events.iterate.com/stream/woken") return;
    using itx = this.getItx();
    let forged = "written";
    try {
      await itx.append({ type: "events.iterate.com/stream/woken", payload: { incarnation: "forged", previousHead: 0 } });
    } catch (error) {
      forged = error.code;
    }
    await itx.append({ type: "test/woken-handled", payload: { offset: event.offset, incarnation: event.payload.incarnation, forged } });
  }
  async fetch() { return new Response("ok"); }
}
`;

const waitLong = (coordinate: string, query: Omit<WaitForEventInput, "timeoutMs">): Promise<StreamEvent> => waitLongOn(stream(coordinate), query);

describe("stream/woken", () => {
  test("each new incarnation of a created project's root records one woken; the worker receives it, and its own calls wake nothing more", async () => {
    const record = await createProject(env, slug("woken"), "tester");
    const root = `${record.projectId}:/`;
    // The incarnation that created the project is not a wake.
    expect(await ofType(root, STREAM_WOKEN)).toEqual([]);
    const after = await stream(root).head();
    unwrapCoded(await repoStub(env, record.projectId, "/repos/config").commit({ message: "record woken", files: { "worker.ts": WOKEN_WORKER } }, caller));
    await waitLong(root, { type: PROJECT_WORKER_UPDATED, afterOffset: after });

    const incarnations: string[] = [];
    for (let wake = 1; wake <= 2; wake++) {
      await restart(root);
      // Many calls in the new incarnation; the first of them brings it up.
      await Promise.all([stream(root).head(), stream(root).getEvents({ limit: 1 }), stream(root).head()]);
      const woken = await ofType(root, STREAM_WOKEN);
      expect(woken).toHaveLength(wake);
      const latest = woken.at(-1) as StreamEvent;
      const payload = latest.payload as { incarnation: string; previousHead: number };
      // The first event of its incarnation, written by the Stream itself.
      expect(payload.previousHead).toBe(latest.offset - 1);
      expect(latest.source.platform).toBe("stream");
      incarnations.push(payload.incarnation);
      // The worker ran its case for this very event; its forged woken was refused.
      const handled = await stream(root).waitForEvent({ type: "test/woken-handled", afterOffset: latest.offset, payload: { offset: latest.offset }, timeoutMs: 30_000 });
      expect(handled.payload).toMatchObject({ incarnation: payload.incarnation, forged: "PERMISSION_DENIED" });
      await stream(root).waitForEvent({ type: PROJECT_WORKER_EVENT_DELIVERED, afterOffset: latest.offset, payload: { offset: latest.offset }, timeoutMs: 30_000 });
      // Delivering it and the worker's appends ran in this incarnation: still one woken for it.
      expect(await ofType(root, STREAM_WOKEN)).toHaveLength(wake);
    }
    expect(new Set(incarnations).size).toBe(2);
  }, 300_000);

  test("a script or client cannot append stream/woken: PERMISSION_DENIED, nothing written", async () => {
    const root = `${mintProjectId()}:/`;
    await expectCode(() => stream(root, { origin: "/", principal: "tester" }).append({ type: STREAM_WOKEN, payload: { incarnation: "x", previousHead: 0 } }), "PERMISSION_DENIED");
    // Not even the Project processor's own host may: the fact is the Stream's alone.
    await expectCode(() => stream(root, { platform: "processor-host:project" }).append({ type: STREAM_WOKEN, payload: { incarnation: "x", previousHead: 0 } }), "PERMISSION_DENIED");
    expect(await stream(root).head()).toBe(0);
  });

  test("a root whose project has no worker yet, and a stream that is not a root, record none", async () => {
    const { projectId } = await createProject(env, slug("quiet"), "tester");
    const bare = `${mintProjectId()}:/`;
    const child = `${projectId}:/notes`;
    await stream(bare, { origin: "/" }).append({ type: "test/noted", payload: {} });
    await stream(child, { origin: "/notes" }).append({ type: "test/noted", payload: {} });
    for (const coordinate of [bare, child]) {
      await restart(coordinate);
      await stream(coordinate).head();
      expect(await ofType(coordinate, STREAM_WOKEN), coordinate).toEqual([]);
    }
  });

  test("an undelivered woken stands for later incarnations within STREAM_WOKEN_COALESCE_MS (a crash loop wakes the worker once); once delivered, the next incarnation records another", async () => {
    // A root with project/created and no Project processor: nothing delivers its woken.
    const root = `${mintProjectId()}:/`;
    await stream(root, { platform: "processor-host:project" }).append({ type: "events.iterate.com/project/created", payload: { requestOffset: 1 }, idempotencyKey: "project/created" });
    await restart(root);
    await stream(root).head();
    const [first] = await ofType(root, STREAM_WOKEN);
    expect(first).toBeDefined();
    for (let crash = 0; crash < 3; crash++) {
      await restart(root);
      await stream(root).head();
    }
    // Within LIMITS.STREAM_WOKEN_COALESCE_MS of the pending one: no new woken.
    expect(await ofType(root, STREAM_WOKEN)).toHaveLength(1);
    // The feed settles it as the Project processor does; the next incarnation is a new wake.
    const offset = (first as StreamEvent).offset;
    await stream(root, { platform: "processor-host:project" }).append({
      type: PROJECT_WORKER_EVENT_DELIVERED,
      payload: { offset, attempts: 1 },
      idempotencyKey: `project/worker-event-delivered:${offset}`,
    });
    await restart(root);
    await stream(root).head();
    expect(await ofType(root, STREAM_WOKEN)).toHaveLength(2);
  });
});
