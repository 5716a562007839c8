import { describe, expect } from "vitest";
import { withItx } from "iterate/client";
import { connectIterate } from "iterate/node";
import { expectCode } from "iterate/stream/test-support";
import { disconnected } from "../harness/os.ts";
import { newProject } from "../harness/projects.ts";
import { test } from "../harness/fixtures.ts";

describe("clients", () => {
  test("connectItx overloads: root, session, project, agent", async ({ os, project: { projectId }, connect }) => {
    const root = connect();
    expect((await root.authenticate(os.admin).__describe()).kind).toBe("session");
    const project = connect({ auth: os.admin, projectId });
    expect((await project.whoami()).projectId).toBe(projectId);
    const agent = connect({ auth: os.admin, projectId, agentPath: "/agents/demo" });
    expect(await agent.whoami()).toMatchObject({ projectId, path: "/agents/demo" });
    // The agent's context: `agent` is the agent itself, not created yet.
    expect((await agent.agent.__describe()).agent).toEqual({ created: false, offset: 0 });
    await expectCode(agent.agent.message("hello"), "NOT_FOUND");
  });

  test("withItx: a bearer token issued by an admin reaches exactly its projects", async ({ os, admin, project: { projectId, slug } }) => {
    const other = await newProject("bearer-other");
    const { token } = await admin.issueToken({ principal: "laptop", projectIds: [projectId], ttlSeconds: 600 });
    using itx = withItx({ baseUrl: os.baseUrl, token, context: slug });
    expect(await itx.whoami()).toMatchObject({ projectId, path: "/", principal: "laptop" });
    await itx.provideCapability({ name: "hello", capability: (who: string) => `hi ${who}` });
    using child = withItx<{ hello(who: string): string }>({ baseUrl: os.baseUrl, token, context: `${slug}:/itx/child` });
    expect((await child.whoami()).path).toBe("/itx/child");
    expect(await child.hello("there")).toBe("hi there");
    using outside = withItx({ baseUrl: os.baseUrl, token, context: other.slug });
    await expectCode(outside.whoami(), "NOT_FOUND");
    using forged = withItx({ baseUrl: os.baseUrl, token: `${token.slice(0, -2)}xx`, context: slug });
    await expectCode(forged.whoami(), "UNAUTHENTICATED");
    await expectCode(admin.issueToken({ principal: "x", projectIds: [], ttlSeconds: 10 ** 9 }), "INVALID_ARGUMENT");
  });

  test("connectIterate owns the connection; closing it disconnects live provides", async ({ os, project: { projectId }, connect }) => {
    const connection = await connectIterate({ baseUrl: os.baseUrl, auth: os.admin });
    const project = connection.session.projects.get(projectId);
    await project.provideCapability({ name: "clock", capability: () => 42 });
    const reader = connect<{ clock(): number }>({ auth: os.admin, projectId });
    expect(await reader.clock()).toBe(42);
    connection[Symbol.dispose]();
    await expect.poll(() => disconnected(reader.clock()), { timeout: 5000 }).toBe(true);
    await expect(connectIterate({ baseUrl: os.baseUrl, auth: { type: "admin-secret", secret: "wrong" } })).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
  });
});
