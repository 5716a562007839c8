import { describe, expect, test } from "vitest";
import { connectItx } from "iterate/client";
import type { StreamEvent } from "iterate/types";
import { target, disconnected } from "../harness/os.ts";
import { newProject } from "../harness/projects.ts";
import { expectCode } from "iterate/stream/test-support";

// oxlint-disable typescript/no-explicit-any -- capability paths are dynamic by design

describe("scene 1: use a capability", () => {
  test("describe lists what a context can call, and a dotted call reaches it", async () => {
    const { projectId } = await newProject("scene1");
    const { baseUrl, admin } = target();
    using provider: any = connectItx({ baseUrl, auth: admin, projectId });
    await provider.provideCapability({
      name: "slack",
      instructions: "Use itx.slack.chat.postMessage({ channel, text }).",
      capability: { chat: { postMessage: ({ channel, text }: { channel: string; text: string }) => ({ ok: true, channel, echoed: text }) } },
    });
    using itx: any = connectItx({ baseUrl, auth: admin, projectId });
    const description = await itx.__describe();
    expect(description.capabilities).toContainEqual(
      expect.objectContaining({ path: ["slack"], kind: "live", scope: "/", connected: true, instructions: expect.stringContaining("postMessage") }),
    );
    expect(await itx.slack.chat.postMessage({ channel: "C123", text: "hi" })).toEqual({ ok: true, channel: "C123", echoed: "hi" });
  });
});

describe("scene 2: offer a capability from your laptop", () => {
  test("a bare function runs in the provider's process until it disconnects", async () => {
    const { projectId } = await newProject("scene2");
    const { baseUrl, admin } = target();
    const calls: string[] = [];
    const provider: any = connectItx({ baseUrl, auth: admin, projectId });
    const provision = await provider.provideCapability({
      name: "runSwiftOnMyMac",
      instructions: "Compile-and-run Swift here. Pass the source string.",
      capability: async (source: string) => {
        calls.push(source);
        return `ran ${source.length} chars in pid ${process.pid}`;
      },
    });
    expect(await provision.path).toEqual(["runSwiftOnMyMac"]);
    using other: any = connectItx({ baseUrl, auth: admin, projectId });
    expect(await other.runSwiftOnMyMac('print("hi")')).toBe(`ran 11 chars in pid ${process.pid}`);
    expect(calls).toEqual(['print("hi")']);

    provider[Symbol.dispose]();
    await expect.poll(() => disconnected(other.runSwiftOnMyMac("x")), { timeout: 5000 }).toBe(true);
    const description = await other.__describe();
    expect(description.capabilities).toContainEqual(expect.objectContaining({ path: ["runSwiftOnMyMac"], connected: false }));
  });

  test("revoke removes it; the stream holds provided then revoked", async () => {
    const { projectId } = await newProject("revoke");
    const { baseUrl, admin } = target();
    using provider: any = connectItx({ baseUrl, auth: admin, projectId });
    const provision = await provider.provideCapability({ name: "greet", capability: (who: string) => `hello ${who}` });
    using other: any = connectItx({ baseUrl, auth: admin, projectId });
    expect(await other.greet("ada")).toBe("hello ada");
    expect(await provision.revoke()).toBe(true);
    const error = await expectCode(other.greet("ada"), "NOT_FOUND");
    expect(error.message).toMatch(/no capability greet/);
    const events: StreamEvent[] = await other.getEvents({ types: ["events.iterate.com/itx/capability-provided", "events.iterate.com/itx/capability-revoked"] });
    expect(events.map((event) => event.type.split("/").at(-1))).toEqual(["capability-provided", "capability-revoked"]);
  });
});

describe("scene 3: override one method", () => {
  test("a child shadows one path, falls through for the rest, and super skips the shadow", async () => {
    const { projectId } = await newProject("scene3");
    const { baseUrl, admin } = target();
    using itx: any = connectItx({ baseUrl, auth: admin, projectId });
    const commits: string[] = [];
    await itx.provideCapability({
      name: "workspace",
      capability: {
        readFile: (path: string) => `contents of ${path}`,
        git: { commit: (input: { message: string }) => (commits.push(input.message), `committed ${input.message}`) },
      },
    });
    const session: any = itx.extend({ name: `review-run-${Date.now()}` });
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
  test("every node describes itself; the inventory lists built-ins and scope-tagged mounts, shadowed ones marked", async () => {
    const { projectId } = await newProject("describe");
    const { baseUrl, admin } = target();
    using itx: any = connectItx({ baseUrl, auth: admin, projectId });
    await itx.provideCapability({ name: "tool", instructions: "root tool", capability: () => "root" });
    const child = itx.extend({ path: "/agents/helper" });
    await child.provideCapability({ name: "tool", instructions: "child tool", capability: () => "child" });
    const description = await child.__describe();
    expect(description).toMatchObject({ kind: "itx", path: "/agents/helper", parent: "/", projectId });
    expect(typeof description.instructions).toBe("string");
    expect(description.types).toMatch(/interface Itx/);
    expect(description.capabilities).toContainEqual(expect.objectContaining({ path: ["streams"], kind: "built-in", scope: "platform" }));
    const tools = description.capabilities.filter((capability: { path: string[] }) => capability.path[0] === "tool");
    expect(tools).toEqual([
      expect.objectContaining({ scope: "/agents/helper", instructions: "child tool" }),
      expect.objectContaining({ scope: "/", instructions: "root tool", shadowed: true }),
    ]);
    expect(await child.tool()).toBe("child");
    expect((await itx.capabilityHost.__describe()).path).toBe("/");
    expect(await itx.capabilityHosts.get("/agents/helper").path()).toBe("/agents/helper");
  });
});
