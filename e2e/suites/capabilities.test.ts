import { describe, expect } from "vitest";
import type { EventInput, Itx, ProvideCapabilityInput, Stream, StreamEvent } from "iterate/types";
import type { Handle } from "iterate/client";
import { mounted, test } from "../harness/fixtures.ts";
import { expectCode } from "iterate/stream/test-support";

const one = (): number => 1;
const two = (): number => 2;

describe("capability kinds", () => {
  test("an object implementing call({ path, args }) owns its whole method tree", async ({ project: { itx } }) => {
    const seen: unknown[] = [];
    await itx.provideCapability({
      name: "sdk",
      capability: { call: ({ path, args }: { path: string[]; args: unknown[] }) => (seen.push(path), `${path.join("/")}(${JSON.stringify(args)})`) },
    });
    const sdk = mounted<{ sdk: { users: { lookup: { byEmail(email: string): string } } } }>(itx).sdk;
    expect(await sdk.users.lookup.byEmail("a@b.c")).toBe('users/lookup/byEmail(["a@b.c"])');
    expect(await itx.invokeCapability({ path: ["sdk", "x"], args: [1, 2] })).toBe("x([1,2])");
    expect(seen).toEqual([["users", "lookup", "byEmail"], ["x"]]);
  });

  test("a durable expression mount replays against the context and survives its provider", async ({ os, project: { projectId }, connect }) => {
    const provider = connect({ auth: os.admin, projectId });
    await provider.provideCapability({
      name: "log",
      instructions: "itx.log.append(event) appends to /log",
      capability: { type: "itx-expression", steps: [{ path: ["streams", "get"], args: ["/log"] }] },
    });
    await provider.provideCapability({
      name: "note",
      capability: { type: "itx-expression", steps: [{ path: ["streams", "get"], args: ["/log"] }, { path: ["append"] }] },
    });
    provider[Symbol.dispose]();
    const itx = connect<{ log: Stream; note(...events: EventInput[]): StreamEvent[] }>({ auth: os.admin, projectId });
    const [first] = await itx.log.append({ type: "demo/noted", payload: { n: 1 } });
    const [second] = await itx.note({ type: "demo/noted", payload: { n: 2 } });
    expect([first?.offset, second?.offset]).toEqual([1, 2]);
    const events = await itx.streams.get("/log").getEvents({});
    expect(events.map((event) => event.payload)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(events[0]?.source.origin).toBe("/");
    const description = await itx.__describe();
    expect(description.capabilities).toContainEqual(expect.objectContaining({ path: ["log"], kind: "itx-expression", connected: true }));
  });

  test("a mount that aliases itself is refused", async ({ project: { itx } }) => {
    const error = await expectCode(itx.provideCapability({ name: "loop", capability: { type: "itx-expression", steps: [{ path: ["loop"] }] } }), "INVALID_ARGUMENT");
    expect(error.message).toMatch(/would call itself/);
  });

  test("expressions that call each other in a cycle stop with LOOP_LIMIT", async ({ project: { itx } }) => {
    await itx.provideCapability({ name: "ping", capability: { type: "itx-expression", steps: [{ path: ["pong"] }] } });
    await itx.provideCapability({ name: "pong", capability: { type: "itx-expression", steps: [{ path: ["ping"] }] } });
    await expectCode(mounted<{ ping(): unknown }>(itx).ping(), "LOOP_LIMIT");
  });

  test("a replacement mount at the same path wins", async ({ project: { itx } }) => {
    await itx.provideCapability({ name: "version", capability: one });
    await itx.provideCapability({ name: "version", capability: two });
    expect(await mounted<{ version(): number }>(itx).version()).toBe(2);
  });

  test("a stream-derived table: append and waitForEvent on the context's own stream", async ({ project: { itx } }) => {
    const waiting = itx.waitForEvent({ type: "demo/done", timeoutMs: 5000 });
    await itx.append({ type: "demo/done", payload: { ok: true } });
    expect((await waiting).payload).toEqual({ ok: true });
    const page = await itx.readEvents({ afterOffset: 0 });
    expect(page.events.map((event) => event.type)).toContain("events.iterate.com/project/created");
  });
});

describe("live calls between sessions", () => {
  test("plain data, callbacks in arguments and stubs in results all cross", async ({ os, project: { projectId, itx: provider }, connect }) => {
    const caller = connect<{ tools: Tools }>({ auth: os.admin, projectId });
    await provider.provideCapability({
      name: "tools",
      capability: {
        echo: (value: unknown) => value,
        twice: async (callback: (n: number) => Promise<number>) => (await callback(1)) + (await callback(2)),
        counter: () => {
          let count = 0;
          return { next: () => ++count };
        },
        fail: () => {
          throw new Error("provider says no");
        },
      },
    });
    const value = { text: "hé", list: [1, 2, { deep: true }], at: new Date(0) };
    expect(await caller.tools.echo(value)).toEqual(value);
    expect(await caller.tools.twice((n: number) => n * 10)).toBe(30);
    using counter = await caller.tools.counter();
    expect([await counter.next(), await counter.next()]).toEqual([1, 2]);
    // The provider's own (uncoded) error reaches the caller with its message.
    await expect(caller.tools.fail()).rejects.toThrow(/provider says no/);
  });

  test("a new shadow on any link of a deep chain takes the very next call; revoking it falls through", async ({ project: { itx } }) => {
    await itx.provideCapability({ name: "who", capability: () => "root" });
    let leaf: Handle<Itx & Link> = mounted<Link>(itx);
    const links = [leaf];
    for (let depth = 1; depth <= 6; depth++) links.push((leaf = mounted<Link>(leaf.extend({ name: `link-${depth}` }))));
    const link = (depth: number) => links[depth] ?? expect.unreachable(`no link ${depth}`);
    expect(await leaf.who()).toBe("root");
    expect(await leaf.who()).toBe("root");
    const middle = await link(3).provideCapability({ name: "who", capability: () => "link-3" });
    expect(await leaf.who()).toBe("link-3");
    const near = await link(5).provideCapability({ name: "who", capability: () => "link-5" });
    expect(await leaf.who()).toBe("link-5");
    await near.revoke();
    expect(await leaf.who()).toBe("link-3");
    await middle.revoke();
    expect(await leaf.who()).toBe("root");
    await expectCode(leaf.missing(), "NOT_FOUND");
    await link(2).provideCapability({ name: "missing", capability: () => "now here" });
    expect(await leaf.missing()).toBe("now here");
  });
});

/** What the live-calls test provides as `tools`. */
interface Tools {
  echo<T>(value: T): T;
  twice(callback: (n: number) => number | Promise<number>): number;
  counter(): { next(): number };
  fail(): never;
}

/** A link of the deep chain, with what the test mounts along it. */
type Link = { who(): string; missing(): string };

describe("bad input changes nothing", () => {
  test.for([
    ["a reserved name", { name: "__proto__", capability: one }],
    ["a reserved segment deeper down", { path: ["a", "constructor"], capability: one }],
    ["then", { name: "then", capability: one }],
    ["an empty path", { path: [], capability: one }],
    ["a non-string segment", { path: ["a", 3], capability: one }],
    ["a built-in name", { name: "streams", capability: one }],
    ["no capability", { name: "x" }],
    ["an unknown capability kind", { name: "x", capability: { type: "rpc", worker: { type: "binding", binding: "AI" } } }],
    ["a value that is not a capability", { name: "x", capability: 42 }],
    ["an object with no methods", { name: "x", capability: { a: 1 } }],
    ["oversized instructions (INSTRUCTIONS_MAX_LENGTH)", { name: "x", instructions: "i".repeat(4001), capability: one }],
    ["oversized types (TYPES_MAX_LENGTH)", { name: "x", types: "t".repeat(16_001), capability: one }],
    ["name and path together", { name: "x", path: ["x"], capability: one }],
    ["an unknown field", { name: "x", capability: one, colour: "red" }],
  ])("%s is INVALID_ARGUMENT", async ([_name, input], { project: { itx } }) => {
    // The project's own worker keeps writing lifecycle facts meanwhile: count the capability table's facts.
    const mounts = async () => (await itx.getEvents({ types: ["events.iterate.com/itx/capability-provided", "events.iterate.com/itx/capability-revoked"] })).length;
    const before = await mounts();
    // Deliberately malformed inputs: the contract's type would refuse most at compile time.
    await expectCode(itx.provideCapability(input as ProvideCapabilityInput), "INVALID_ARGUMENT");
    expect(await mounts()).toBe(before);
    expect(Object.keys((await itx.__describe()).children ?? {})).not.toContain("x");
  });

  test("calls with reserved or malformed paths are refused", async ({ project: { itx } }) => {
    await expectCode(itx.invokeCapability({ path: ["__proto__"], args: [] }), "INVALID_ARGUMENT");
    await expectCode(itx.invokeCapability({ path: [], args: [] }), "INVALID_ARGUMENT");
    // Deliberately malformed: a dotted string for a path, a string for the arguments.
    await expectCode(itx.invokeCapability({ path: "a.b" as unknown as string[], args: [] }), "INVALID_ARGUMENT");
    await expectCode(itx.invokeCapability({ path: ["a"], args: "x" as unknown as unknown[] }), "INVALID_ARGUMENT");
    await expectCode(mounted<{ nothingHere(): unknown }>(itx).nothingHere(), "NOT_FOUND");
  });

  test("a bad project slug is INVALID_ARGUMENT and a taken one is refused", async ({ admin: session, project: { slug } }) => {
    for (const bad of ["A", "x", "has space", "prj_abc", "-lead", "trail-", "a".repeat(64), 42]) {
      // 42 is deliberately not a string: the contract's type would refuse it at compile time.
      await expectCode(session.projects.create({ slug: bad as string }), "INVALID_ARGUMENT", String(bad));
    }
    const error = await expectCode(session.projects.create({ slug }), "INVALID_ARGUMENT");
    expect(error.message).toMatch(/taken/);
  });
});

describe("projects", () => {
  test("get returns a handle without creating; create() makes it; list shows it", async ({ admin: session }) => {
    const slug = `lazy-${Date.now().toString(36)}`;
    const handle = session.projects.get(slug);
    await expectCode(handle.whoami(), "NOT_FOUND");
    expect((await session.projects.list()).map((project) => project.slug)).not.toContain(slug);
    await handle.create();
    const { projectId } = await handle.whoami();
    expect(projectId).toMatch(/^prj_[a-z2-7]{20}$/);
    expect((await session.projects.list()).map((project) => project.slug)).toContain(slug);
    // Creation is a run of the Project processor (docs/projects.md): the request, then its facts in order.
    const types: string[] = (await session.projects.get(projectId).getEvents({})).map((event) => event.type);
    const requested = types.indexOf("events.iterate.com/project/create-requested");
    const context = types.indexOf("events.iterate.com/itx/created");
    expect(requested).toBeGreaterThanOrEqual(0);
    expect(context).toBeGreaterThan(requested);
    expect(types.indexOf("events.iterate.com/project/created")).toBeGreaterThan(context);
    expect(types.filter((type) => type === "events.iterate.com/project/created")).toHaveLength(1);
  });
});

describe("fetch is a shadowable default", () => {
  test("a child's fetch shadow takes its calls; super reaches the default pipe", async ({ os, project: { itx } }) => {
    const child = itx.extend({ name: "sandboxed" });
    const seen: string[] = [];
    await child.provideCapability({
      name: "fetch",
      capability: (request: Request | string) => {
        seen.push(typeof request === "string" ? request : request.url);
        return new Response("from the shadow", { status: 203 });
      },
    });
    const shadowed = await child.fetch("https://api.example.test/v1");
    expect([shadowed.status, await shadowed.text()]).toEqual([203, "from the shadow"]);
    expect(seen).toEqual(["https://api.example.test/v1"]);
    const real = await child.super.fetch(`${os.baseUrl}/health`);
    expect(await real.json()).toMatchObject({ ok: true });
    await expectCode(itx.fetch("file:///etc/passwd"), "EGRESS_REFUSED");
    await expectCode(itx.provideCapability({ name: "streams", capability: () => 1 }), "INVALID_ARGUMENT");
  });
});
