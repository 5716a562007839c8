import { describe, expect } from "vitest";
import type { Handle } from "iterate/client";
import { expectCode } from "iterate/stream/test-support";
import type { BuiltInGrant, ProjectRoot, ProvideCapabilityInput, StreamEvent } from "iterate/types";
import { test } from "../harness/fixtures.ts";

/** Makes `/jails/<name>` a jail from outside it (its own code could not), with `grants` beside the null row. */
async function jail(itx: Handle<ProjectRoot>, name: string, grants: Record<string, ProvideCapabilityInput["capability"]> = {}) {
  const path = `/jails/${name}`;
  const inside = await itx.extend({ path });
  const outside = itx.cd(path);
  for (const [grant, capability] of Object.entries(grants)) await outside.provideCapability({ name: grant, capability });
  await outside.provideCapability({ path: [], capability: null });
  return inside;
}

const BUILT_IN: BuiltInGrant = { type: "built-in" };

describe("jails", () => {
  test("a bare jail is closed both ways: its code reaches nothing and appends nowhere, and nothing appends into it", async ({ project: { itx } }) => {
    await itx.provideCapability({ name: "greet", capability: () => "hello from the root" });
    const cell = await jail(itx, "bare");
    const attempts = await cell.run(`async (itx) => {
      const tries = {
        append: () => itx.append({ type: "demo/escaped" }),
        cd: () => itx.cd("/").append({ type: "demo/escaped" }),
        streams: () => itx.streams.get("/"),
        super: () => itx.super.append({ type: "demo/escaped" }),
        extend: () => itx.extend({ name: "out" }),
        provide: () => itx.provideCapability({ name: "x", capability: { type: "built-in" } }),
        unjail: () => itx.revokeCapability({ path: [] }),
        run: () => itx.run("async () => 1"),
        agents: () => itx.agents.list(),
        secrets: () => itx.secrets.get("/secrets/x").__describe(),
        workers: () => itx.workers.get({ source: { files: { "a.js": "export default {}" } } }),
        hosts: () => itx.capabilityHosts.get("/").provideCapability({ name: "y", capability: () => 1 }),
        inherited: () => itx.greet(),
        fetch: () => fetch("http://127.0.0.1:9/"),
      };
      const out = {};
      for (const [name, attempt] of Object.entries(tries)) {
        try { await attempt(); out[name] = "reached"; } catch (error) { out[name] = String(error.message).includes("jail") || String(error.message).includes("no capability") ? "refused" : String(error.message); }
      }
      const described = await itx.__describe();
      out.describe = described.capabilities.map((row) => row.path.join("."));
      out.whoami = await itx.whoami();
      return out;
    }`);
    // What the script above returns: one outcome per try, its inventory and its whoami.
    const { describe: described, whoami, ...tries } = attempts as { describe: string[]; whoami: unknown; [attempt: string]: unknown };
    expect(tries).toEqual(Object.fromEntries(Object.keys(tries).map((name) => [name, "refused"])));
    expect(described).toEqual(["whoami", "invokeCapability"]);
    expect(whoami).toMatchObject({ path: "/jails/bare", origin: "/jails/bare" });
    await expectCode(itx.cd("/jails/bare").append({ type: "demo/in" }), "PERMISSION_DENIED");
    const types = (await (await itx.streams.get("/")).getEvents({ types: ["demo/escaped"] })).length;
    expect(types).toBe(0);
  });

  test("grants open exactly what they name; the jail's own code still cannot lift the null", async ({ project: { itx } }) => {
    const cell = await jail(itx, "granted", { append: BUILT_IN, readEvents: BUILT_IN, greet: (name: string) => `hi ${name}` });
    const result = await cell.run(`async (itx) => {
      await itx.append({ type: "demo/inside" });
      const page = await itx.readEvents({ afterOffset: 0 });
      let lifted = "no";
      try { await itx.revokeCapability({ path: [] }); lifted = "yes"; } catch {}
      let away = "no";
      try { await itx.cd("/").append({ type: "demo/escaped" }); away = "yes"; } catch {}
      return { greeting: await itx.greet("ada"), read: page.events.some((event) => event.type === "demo/inside"), lifted, away };
    }`);
    expect(result).toEqual({ greeting: "hi ada", read: true, lifted: "no", away: "no" });
    // Granting append opens the jail to every writer.
    await itx.cd("/jails/granted").append({ type: "demo/in" });
    const inside = await (await itx.streams.get("/jails/granted")).getEvents({ types: ["demo/inside", "demo/in"] });
    expect(inside.map((event: StreamEvent) => [event.type, event.source.origin])).toEqual([
      ["demo/inside", "/jails/granted"],
      ["demo/in", "/"],
    ]);
    // A handle acting as the jail cannot change its rows either; only code acting elsewhere can.
    await expectCode(cell.revokeCapability({ path: [] }), "PERMISSION_DENIED");
    expect(await itx.cd("/jails/granted").revokeCapability({ path: [] })).toBe(true);
    expect(await cell.run("async (itx) => (await itx.cd('/').whoami()).path")).toBe("/");
  });

  test("a jail confines the code in it, not a context it creates through a grant", async ({ project: { itx } }) => {
    // The grant runs as the code that provided it (this session), so what it creates is free.
    await itx.cd("/jails/spawner").provideCapability({ name: "noop", capability: () => 0 });
    const cell = await jail(itx, "spawner", {
      spawn: async () => {
        const free = await itx.extend({ path: "/free/spawned" });
        return free.run("async (itx) => { await itx.cd('/').append({ type: 'demo/free' }); return (await itx.whoami()).origin; }");
      },
    });
    expect(await cell.run("async (itx) => itx.spawn()")).toBe("/free/spawned");
    expect((await (await itx.streams.get("/")).getEvents({ types: ["demo/free"] })).map((event: StreamEvent) => event.source.origin)).toEqual(["/free/spawned"]);
  });

  test("the root cannot be a jail, and null sits only in the jail row", async ({ project: { itx } }) => {
    await expectCode(itx.provideCapability({ path: [], capability: null }), "INVALID_ARGUMENT");
    await expectCode(itx.cd("/x").provideCapability({ name: "a", capability: null }), "INVALID_ARGUMENT");
    await expectCode(itx.cd("/x").provideCapability({ name: "cd", capability: BUILT_IN }), "INVALID_ARGUMENT");
    await expectCode(itx.cd("/x").provideCapability({ path: [], capability: () => 1 }), "INVALID_ARGUMENT");
  });
});
