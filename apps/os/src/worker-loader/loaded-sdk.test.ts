import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import type { StreamEvent } from "iterate/types";
import { ensureContext } from "../itx/context-lifecycle.ts";
import { ItxRpcTarget } from "../itx/itx-rpc-target.ts";
import { buildWorker } from "./worker-build.ts";
import { expectCode } from "iterate/stream/test-support";

// oxlint-disable typescript/no-explicit-any -- dynamic workers are dynamic by design

// Loaded code that reaches its context the SDK way: `this.getItx()` from `iterate/worker`,
// which the build resolves to this deployment's own SDK.
const files = {
  "src/index.ts": `import { IterateDurableObject, IterateEntrypoint } from "iterate/worker";

export default class Notes extends IterateEntrypoint {
  async where(): Promise<string> {
    using itx = this.getItx();
    return (await itx.whoami()).path;
  }
  async note(text: string): Promise<number> {
    using itx = this.getItx();
    const [event] = await itx.append({ type: "test/noted", payload: { text } });
    return event.offset;
  }
}

export class Tally extends IterateDurableObject {
  async bump(): Promise<{ n: number; path: string }> {
    const n = ((await this.ctx.storage.get<number>("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    using itx = this.getItx();
    await itx.append({ type: "test/bumped", payload: { n } });
    return { n, path: (await itx.whoami()).path };
  }
}`,
};

let counter = 0;
async function rootItx(): Promise<ItxRpcTarget> {
  counter += 1;
  const projectId = `prj_loaded${Date.now()}${counter}`;
  await ensureContext(env, { projectId, path: "/", name: "test", parent: null, ancestors: [], caller: { principal: "tester", origin: "/", connectionId: "conn-1" } });
  return new ItxRpcTarget({ env, principal: "tester", projectId, path: "/", origin: "/" });
}

async function eventsOf(itx: ItxRpcTarget, type: string): Promise<StreamEvent[]> {
  return itx.getEvents({ types: [type] });
}

describe("iterate/worker in loaded code", () => {
  test("a stateless entrypoint's getItx() is its ref's context, and its append lands there", { timeout: 120_000 }, async () => {
    const root = await rootItx();
    const child = await root.extend({ name: "w" });
    const atRoot: any = await root.workers.get({ source: { files } });
    const atChild: any = await child.workers.get({ source: { files } });
    expect(await atRoot.where()).toBe("/");
    expect(await atChild.where()).toBe("/itx/w");
    const offset = await atChild.note("hello");
    expect(await eventsOf(child, "test/noted")).toEqual([
      expect.objectContaining({ offset, streamPath: "/itx/w", payload: { text: "hello" }, source: expect.objectContaining({ origin: "/itx/w" }) }),
    ]);
    expect(await eventsOf(root, "test/noted")).toEqual([]);
  });

  test("a durable object facet's getItx() is its host's context, and its state is its own", { timeout: 120_000 }, async () => {
    const root = await rootItx();
    const child = await root.extend({ name: "d" });
    const ref = { source: { files }, durableObject: { className: "Tally", key: "tally-1" } };
    const tally: any = await child.workers.get(ref);
    expect(await tally.bump()).toEqual({ n: 1, path: "/itx/d" });
    expect(await ((await child.workers.get(ref)) as any).bump()).toEqual({ n: 2, path: "/itx/d" });
    expect((await eventsOf(child, "test/bumped")).map((event) => event.payload)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  test("getItx is not an RPC method: a stub on the worker cannot ask it for its scope", { timeout: 120_000 }, async () => {
    const root = await rootItx();
    const worker: any = await root.workers.get({ source: { files } });
    const facet: any = await root.workers.get({ source: { files }, durableObject: { className: "Tally", key: "tally-1" } });
    // An RPC promise is callable, so it is awaited here rather than handed to expect().rejects.
    const failures = await Promise.all([worker.getItx(), facet.getItx()].map((call) => call.then(() => undefined, (error: unknown) => String(error))));
    expect(failures).toEqual([expect.stringMatching(/does not implement the method "getItx"/), expect.stringMatching(/does not implement the method "getItx"/)]);
  });

  test("without an ITX binding getItx() throws UNAVAILABLE", { timeout: 120_000 }, async () => {
    const built = await buildWorker({ files });
    const worker = env.LOADER.get(`loaded-sdk-test:${built.hash}:no-itx`, () => ({
      compatibilityDate: "2026-08-01",
      mainModule: built.mainModule,
      modules: built.modules,
      env: {},
    }));
    const entrypoint: any = worker.getEntrypoint();
    await expectCode(entrypoint.where(), "UNAVAILABLE");
  });
});
