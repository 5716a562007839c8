import { describe, expect } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import type { CapabilityDescription, Itx, StreamEvent } from "iterate/types";
import { disconnected } from "../harness/os.ts";
import { mounted, test } from "../harness/fixtures.ts";

/** What scene 3's root mounts and its child shadows one method of. */
interface Workspace {
  workspace: { readFile(path: string): string; git: { commit(input: { message: string }): string } };
}

describe("scene 1: use a capability", () => {
  test("describe lists what a context can call, and a dotted call reaches it", async ({ os, project: { projectId }, connect }) => {
    const provider = connect({ auth: os.admin, projectId });
    await provider.provideCapability({
      name: "slack",
      instructions: "Use itx.slack.chat.postMessage({ channel, text }).",
      capability: { chat: { postMessage: ({ channel, text }: { channel: string; text: string }) => ({ ok: true, channel, echoed: text }) } },
    });
    const itx = connect<{ slack: { chat: { postMessage(input: { channel: string; text: string }): { ok: boolean; channel: string; echoed: string } } } }>({ auth: os.admin, projectId });
    const description = await itx.__describe();
    expect(description.capabilities).toContainEqual(
      expect.objectContaining({ path: ["slack"], kind: "live", scope: "/", connected: true, instructions: expect.stringContaining("postMessage") }),
    );
    expect(await itx.slack.chat.postMessage({ channel: "C123", text: "hi" })).toEqual({ ok: true, channel: "C123", echoed: "hi" });
  });
});

describe("scene 2: offer a capability from your laptop", () => {
  test("a bare function runs in the provider's process until it disconnects", async ({ os, project: { projectId }, connect }) => {
    const calls: string[] = [];
    const provider = connect({ auth: os.admin, projectId });
    const provision = await provider.provideCapability({
      name: "runSwiftOnMyMac",
      instructions: "Compile-and-run Swift here. Pass the source string.",
      capability: async (source: string) => {
        calls.push(source);
        return `ran ${source.length} chars in pid ${process.pid}`;
      },
    });
    expect(await provision.path).toEqual(["runSwiftOnMyMac"]);
    const other = connect<{ runSwiftOnMyMac(source: string): string }>({ auth: os.admin, projectId });
    expect(await other.runSwiftOnMyMac('print("hi")')).toBe(`ran 11 chars in pid ${process.pid}`);
    expect(calls).toEqual(['print("hi")']);

    provider[Symbol.dispose]();
    await expect.poll(() => disconnected(other.runSwiftOnMyMac("x")), { timeout: 5000 }).toBe(true);
    const description = await other.__describe();
    expect(description.capabilities).toContainEqual(expect.objectContaining({ path: ["runSwiftOnMyMac"], connected: false }));
  });

  test("revoke removes it; the stream holds provided then revoked", async ({ os, project: { projectId }, connect }) => {
    const provider = connect({ auth: os.admin, projectId });
    const provision = await provider.provideCapability({ name: "greet", capability: (who: string) => `hello ${who}` });
    const other = connect<{ greet(who: string): string }>({ auth: os.admin, projectId });
    expect(await other.greet("ada")).toBe("hello ada");
    expect(await provision.revoke()).toBe(true);
    const error = await expectCode(other.greet("ada"), "NOT_FOUND");
    expect(error.message).toMatch(/no capability greet/);
    const events: StreamEvent[] = await other.getEvents({ types: ["events.iterate.com/itx/capability-provided", "events.iterate.com/itx/capability-revoked"] });
    expect(events.map((event) => event.type.split("/").at(-1))).toEqual(["capability-provided", "capability-revoked"]);
  });
});

describe("scene 3: override one method", () => {
  test("a child shadows one path, falls through for the rest, and super skips the shadow", async ({ connect, os, project: { projectId } }) => {
    const itx = connect<Workspace>({ auth: os.admin, projectId });
    const commits: string[] = [];
    await itx.provideCapability({
      name: "workspace",
      capability: {
        readFile: (path: string) => `contents of ${path}`,
        git: { commit: (input: { message: string }) => (commits.push(input.message), `committed ${input.message}`) },
      },
    });
    const session = mounted<Itx & Workspace & { super: Workspace }>(itx.extend({ name: `review-run-${Date.now()}` }));
    await session.provideCapability({
      path: ["workspace", "git", "commit"],
      instructions: "publishing waits for human approval",
      capability: async (input: { message: string }) => `held for approval: ${input.message}`,
    });
    expect(await session.workspace.git.commit({ message: "fix" })).toBe("held for approval: fix");
    expect(await session.workspace.readFile("a.txt")).toBe("contents of a.txt");
    expect(await session.super.workspace.git.commit({ message: "direct" })).toBe("committed direct");
    expect(commits).toEqual(["direct"]);
    // Revoking the shadow resurfaces the inherited entry.
    await session.revokeCapability({ path: ["workspace", "git", "commit"] });
    expect(await session.workspace.git.commit({ message: "after" })).toBe("committed after");
    const whoami = await session.whoami();
    expect(whoami.path).toMatch(/^\/itx\/review-run-/);
  });
});

describe("discovery", () => {
  test("every node describes itself; the inventory lists built-ins and scope-tagged mounts, shadowed ones marked", async ({ project: { itx, projectId } }) => {
    await itx.provideCapability({ name: "tool", instructions: "root tool", capability: () => "root" });
    const child = mounted<Itx & { tool(): string }>(itx.extend({ path: "/agents/helper" }));
    await child.provideCapability({ name: "tool", instructions: "child tool", capability: () => "child" });
    const description = await child.__describe();
    expect(description).toMatchObject({ kind: "itx", path: "/agents/helper", parent: "/", projectId });
    expect(typeof description.instructions).toBe("string");
    expect(description.types).toMatch(/interface Itx/);
    expect(description.capabilities).toContainEqual(expect.objectContaining({ path: ["streams"], kind: "built-in", scope: "platform" }));
    const tools = description.capabilities.filter((capability: CapabilityDescription) => capability.path[0] === "tool");
    expect(tools).toEqual([
      expect.objectContaining({ scope: "/agents/helper", instructions: "child tool" }),
      expect.objectContaining({ scope: "/", instructions: "root tool", shadowed: true }),
    ]);
    expect(await child.tool()).toBe("child");
    expect((await itx.capabilityHost.__describe()).path).toBe("/");
    expect(await itx.capabilityHosts.get("/agents/helper").path()).toBe("/agents/helper");
  });
});
