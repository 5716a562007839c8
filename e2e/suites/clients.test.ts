import { describe, expect, test } from "vitest";
import { connectItx, withItx } from "iterate/client";
import { connectIterate } from "iterate/node";
import { adminSession, target, disconnected } from "../harness/os.ts";
import { newProject } from "../harness/projects.ts";
import { expectCode } from "iterate/stream/test-support";

// oxlint-disable typescript/no-explicit-any -- capability paths are dynamic by design

describe("clients", () => {
  test("connectItx overloads: root, session, project, agent", async () => {
    const { projectId } = await newProject("overloads");
    const { baseUrl, admin } = target();
    using root: any = connectItx({ baseUrl });
    expect((await root.authenticate(admin).__describe()).kind).toBe("session");
    using project: any = connectItx({ baseUrl, auth: admin, projectId });
    expect((await project.whoami()).projectId).toBe(projectId);
    using agent: any = connectItx({ baseUrl, auth: admin, projectId, agentPath: "/agents/demo" });
    expect(await agent.whoami()).toMatchObject({ projectId, path: "/agents/demo" });
    // The agent's context: `agent` is the agent itself, not created yet.
    expect((await agent.agent.__describe()).agent).toEqual({ created: false, offset: 0 });
    await expectCode(agent.agent.message("hello"), "NOT_FOUND");
  });

  test("withItx: a bearer token issued by an admin reaches exactly its projects", async () => {
    const { projectId, slug } = await newProject("bearer");
    const other = await newProject("bearer-other");
    const { baseUrl } = target();
    using admin: any = adminSession();
    const { token } = await admin.issueToken({ principal: "laptop", projectIds: [projectId], ttlSeconds: 600 });
    using itx: any = withItx({ baseUrl, token, context: slug });
    expect(await itx.whoami()).toMatchObject({ projectId, path: "/", principal: "laptop" });
    await itx.provideCapability({ name: "hello", capability: (who: string) => `hi ${who}` });
    using child: any = withItx({ baseUrl, token, context: `${slug}:/itx/child` });
    expect((await child.whoami()).path).toBe("/itx/child");
    expect(await child.hello("there")).toBe("hi there");
    using outside: any = withItx({ baseUrl, token, context: other.slug });
    await expectCode(outside.whoami(), "NOT_FOUND");
    using forged: any = withItx({ baseUrl, token: `${token.slice(0, -2)}xx`, context: slug });
    await expectCode(forged.whoami(), "UNAUTHENTICATED");
    await expectCode(admin.issueToken({ principal: "x", projectIds: [], ttlSeconds: 10 ** 9 }), "INVALID_ARGUMENT");
  });

  test("connectIterate owns the connection; closing it disconnects live provides", async () => {
    const { projectId } = await newProject("node");
    const { baseUrl, admin } = target();
    const connection = await connectIterate({ baseUrl, auth: admin });
    const project = connection.session.projects.get(projectId);
    await project.provideCapability({ name: "clock", capability: () => 42 });
    using reader: any = connectItx({ baseUrl, auth: admin, projectId });
    expect(await reader.clock()).toBe(42);
    connection[Symbol.dispose]();
    await expect.poll(() => disconnected(reader.clock()), { timeout: 5000 }).toBe(true);
    await expect(connectIterate({ baseUrl, auth: { type: "admin-secret", secret: "wrong" } })).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
  });
});
