import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import { ensureContext } from "../itx/context-lifecycle.ts";
import { hostStub } from "./host-stub.ts";
import { expectCode } from "iterate/stream/test-support";
import { LIMITS } from "../limits.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import type { StreamDurableObject } from "../stream/stream-durable-object.ts";

let counter = 0;
const caller = { principal: "tester", origin: "/", connectionId: "conn-1" };
const recipe = (path: string) => ({ type: "itx-expression", steps: [{ path: ["streams", "get"], args: [path] }] });

async function freshProject(): Promise<string> {
  counter += 1;
  const projectId = `prj_host${Date.now()}${counter}`;
  await ensureContext(env, { projectId, path: "/", name: "test", parent: null, ancestors: [], caller });
  return projectId;
}

// A row of about 40 KB as JSON (two-byte characters): 30 of them would be 1.2 MB of table, past
// the checkpoint's 1 MiB, so without MOUNTS_MAX_BYTES the provides past it would fail otherwise.
const heavy = (i: number) => ({ path: [`heavy${i}`], capability: recipe("/x"), caller, types: "é".repeat(LIMITS.TYPES_MAX_LENGTH), instructions: `${i} ${"é".repeat(LIMITS.INSTRUCTIONS_MAX_LENGTH - 5)}` });

describe("capability host", () => {
  test("a deleted checkpoint is rebuilt by replay to the same table", async () => {
    const projectId = await freshProject();
    const host = hostStub(env, projectId, "/");
    await host.provide({ path: ["a"], capability: recipe("/a"), caller, instructions: "first" });
    await host.provide({ path: ["b"], capability: recipe("/b"), caller });
    await host.provide({ path: ["a", "deep"], capability: recipe("/c"), caller });
    await host.revoke({ path: ["b"], caller });
    const before = await host.describeOwn();
    await runInDurableObject(env.CAPABILITY_HOST.getByName(`${projectId}:/`), async (_instance, state) => {
      await state.storage.deleteAll();
      state.abort("test: forget the checkpoint");
    }).catch(() => undefined);
    const after = await hostStub(env, projectId, "/").describeOwn();
    expect(after).toEqual(before);
    expect(after.capabilities.map((capability) => capability.path)).toEqual([["a"], ["a", "deep"]]);
  });

  test("a live mount whose host restarted answers CAPABILITY_DISCONNECTED and stays listed", async () => {
    const projectId = await freshProject();
    await hostStub(env, projectId, "/").provide({ path: ["clock"], capability: () => 42, caller });
    expect(await hostStub(env, projectId, "/").invoke({ path: ["clock"], args: [], caller })).toBe(42);
    await runInDurableObject(env.CAPABILITY_HOST.getByName(`${projectId}:/`), (_instance, state) => state.abort("test: restart")).catch(
      () => undefined,
    );
    const host = hostStub(env, projectId, "/");
    await expectCode(host.invoke({ path: ["clock"], args: [], caller }), "CAPABILITY_DISCONNECTED");
    expect((await host.describeOwn()).capabilities).toEqual([expect.objectContaining({ path: ["clock"], connected: false })]);
  });

  test("a host with a live mount keeps its stream's session (the value lives only in its memory); without one it lets it go", async () => {
    const projectId = await freshProject();
    const coordinate = `${projectId}:/`;
    const stream = streamStub(env.STREAM, coordinate);
    const host = hostStub(env, projectId, "/");
    const { providedAtOffset } = await host.provide({ path: ["clock"], capability: () => 42, caller });
    const release = () => runInDurableObject(env.STREAM.getByName(coordinate), (instance: StreamDurableObject) => instance.releaseIdleSessions(0));
    const delivered = async () => expect.poll(async () => (await stream.info()).processors[0]?.cursor).toBe(await stream.head());
    await delivered();
    expect(await release()).toBe(0);
    expect(await host.invoke({ path: ["clock"], args: [], caller })).toBe(42);
    await host.revoke({ path: ["clock"], providedAtOffset, caller });
    await delivered();
    expect(await release()).toBe(1);
    // Released: the host still answers (it reads through a stream of its own), and a new mount works.
    await host.provide({ path: ["later"], capability: recipe("/later"), caller });
    expect((await host.describeOwn()).capabilities.map((capability) => capability.path)).toEqual([["later"]]);
  });

  test("a live mount replaced at its path lets its value go: once the last live mount is revoked, the host lets its stream's session go", async () => {
    const projectId = await freshProject();
    const coordinate = `${projectId}:/`;
    const stream = streamStub(env.STREAM, coordinate);
    const host = hostStub(env, projectId, "/");
    await host.provide({ path: ["clock"], capability: () => 1, caller });
    await host.provide({ path: ["clock"], capability: () => 2, caller });
    const { providedAtOffset } = await host.provide({ path: ["clock"], capability: () => 3, caller });
    expect(await host.invoke({ path: ["clock"], args: [], caller })).toBe(3);
    const release = () => runInDurableObject(env.STREAM.getByName(coordinate), (instance: StreamDurableObject) => instance.releaseIdleSessions(0));
    const delivered = async () => expect.poll(async () => (await stream.info()).processors[0]?.cursor).toBe(await stream.head());
    await host.revoke({ path: ["clock"], providedAtOffset, caller });
    await delivered();
    // Before, the two replaced values stayed kept: the host held its session (and its memory) for good.
    expect(await release()).toBe(1);
    // A live mount replaced by a recipe lets go the same way.
    await host.provide({ path: ["dial"], capability: () => 4, caller });
    await host.provide({ path: ["dial"], capability: recipe("/dial"), caller });
    await delivered();
    expect(await release()).toBe(1);
  });

  test("closing the provider's connection appends capability-disconnected for its mounts only", async () => {
    const projectId = await freshProject();
    const host = hostStub(env, projectId, "/");
    await host.provide({ path: ["mine"], capability: () => 1, caller });
    await host.provide({ path: ["theirs"], capability: () => 2, caller: { ...caller, connectionId: "conn-2" } });
    expect(await host.disconnectConnection("conn-1")).toBe(1);
    await expectCode(host.invoke({ path: ["mine"], args: [], caller }), "CAPABILITY_DISCONNECTED");
    expect(await host.invoke({ path: ["theirs"], args: [], caller })).toBe(2);
  });

  test("MOUNTS_MAX bounds a table; replacing an existing mount still works at the limit", { timeout: 120_000 }, async () => {
    const projectId = await freshProject();
    const host = hostStub(env, projectId, "/");
    for (let i = 0; i < LIMITS.MOUNTS_MAX; i += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => host.provide({ path: [`m${i + j}`], capability: recipe("/x"), caller })));
    }
    await expectCode(host.provide({ path: ["one-more"], capability: recipe("/x"), caller }), "INVALID_ARGUMENT");
    await host.provide({ path: ["m0"], capability: recipe("/y"), caller });
    expect((await host.describeOwn()).capabilities).toHaveLength(LIMITS.MOUNTS_MAX);
  });

  test("MOUNTS_MAX_BYTES bounds the table's bytes, provides sent at once included, so its checkpoint is always written", { timeout: 120_000 }, async () => {
    const projectId = await freshProject();
    const host = hostStub(env, projectId, "/");
    const answers = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => host.provide(heavy(i))));
    const refused = answers.filter((answer) => answer.status === "rejected");
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) expect(answer.reason).toMatchObject({ code: "INVALID_ARGUMENT", details: { limit: "MOUNTS_MAX_BYTES" } });
    const held = await host.describeOwn();
    expect(held.capabilities).toHaveLength(30 - refused.length);
    // A new incarnation reads the table from its checkpoint (or replays it): the same table.
    await runInDurableObject(env.CAPABILITY_HOST.getByName(`${projectId}:/`), (_instance, state) => state.abort("test: a new incarnation")).catch(() => undefined);
    const again = hostStub(env, projectId, "/");
    expect(await again.describeOwn()).toEqual(held);
    const saved = await runInDurableObject(env.CAPABILITY_HOST.getByName(`${projectId}:/`), async (_instance, state) => JSON.stringify(Object.fromEntries(await state.storage.list())));
    expect(new TextEncoder().encode(saved).byteLength).toBeLessThan(1_048_576);
    // At the limit, a row replaced by one of the same size still fits; a small new one may not.
    const first = held.capabilities.find((capability) => capability.path[0]?.startsWith("heavy"));
    const index = Number(first?.path[0]?.slice("heavy".length));
    await again.provide(heavy(index));
    await expectCode(again.provide(heavy(99)), "INVALID_ARGUMENT");
  });

  test("reserved, built-in and empty paths are refused at provide", async () => {
    const projectId = await freshProject();
    const host = hostStub(env, projectId, "/");
    for (const path of [["__proto__"], ["a", "then"], ["streams"], []]) {
      await expectCode(host.provide({ path, capability: () => 1, caller }), "INVALID_ARGUMENT", JSON.stringify(path));
    }
    expect((await host.describeOwn()).capabilities).toEqual([]);
  });
});

const who = (name: string) => ({ type: "itx-expression", steps: [{ path: ["cd"], args: [`/${name}`] }, { path: ["whoami"] }] });

async function chain(projectId: string, depth: number): Promise<string[]> {
  const paths = ["/"];
  for (let link = 1; link <= depth; link++) {
    const path = `/itx/link-${link}`;
    await ensureContext(env, { projectId, path, name: `link-${link}`, parent: paths.at(-1) as string, ancestors: [...paths], caller });
    paths.push(path);
  }
  return paths;
}

describe("resolution through a deep chain", () => {
  test("a new mount on a middle link takes the leaf's very next call; a revoke falls through", async () => {
    const projectId = await freshProject();
    const paths = await chain(projectId, 5);
    const leaf = hostStub(env, projectId, paths.at(-1) as string);
    await hostStub(env, projectId, "/").provide({ path: ["who"], capability: who("root"), caller });
    const call = async () => ((await leaf.invoke({ path: ["who"], args: [], caller })) as { path: string }).path;
    expect(await call()).toBe("/root");
    expect(await call()).toBe("/root");
    const middle = hostStub(env, projectId, paths[2] as string);
    const { providedAtOffset } = await middle.provide({ path: ["who"], capability: who("middle"), caller });
    expect(await call()).toBe("/middle");
    await middle.revoke({ path: ["who"], providedAtOffset, caller });
    expect(await call()).toBe("/root");
    await expectCode(leaf.invoke({ path: ["nobody"], args: [], caller }), "NOT_FOUND");
    await hostStub(env, projectId, paths[3] as string).provide({ path: ["nobody"], capability: who("late"), caller });
    expect(await leaf.invoke({ path: ["nobody"], args: [], caller })).toMatchObject({ path: "/late" });
  });

  test("an ancestor that restarted still tells the contexts that remember it", async () => {
    const projectId = await freshProject();
    const paths = await chain(projectId, 3);
    const leaf = hostStub(env, projectId, paths.at(-1) as string);
    await hostStub(env, projectId, "/").provide({ path: ["who"], capability: who("root"), caller });
    expect(await leaf.invoke({ path: ["who"], args: [], caller })).toMatchObject({ path: "/root" });
    await runInDurableObject(env.CAPABILITY_HOST.getByName(`${projectId}:${paths[1]}`), (_instance, state) => state.abort("test: restart")).catch(
      () => undefined,
    );
    await hostStub(env, projectId, paths[1] as string).provide({ path: ["who"], capability: who("first"), caller });
    expect(await leaf.invoke({ path: ["who"], args: [], caller })).toMatchObject({ path: "/first" });
  });
});
