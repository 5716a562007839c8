import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, inject } from "vitest";
import type { RpcStub } from "capnweb";
import { expectCode } from "iterate/stream/test-support";
import type { McpClient, McpToolResult, Session, StreamEvent } from "iterate/types";
import { mounted, test } from "../harness/fixtures.ts";
import { startMcpServer, type McpTestServer } from "../harness/mcp-server.ts";
import { target } from "../harness/os.ts";
import { newProject } from "../harness/projects.ts";

const MATERIAL = `mcp-key-${crypto.randomUUID()}`;
let server: McpTestServer;

beforeAll(async () => {
  server = await startMcpServer();
});
afterAll(async () => {
  await server.close();
});

/** A tool result whose content is text, as the loopback server's tools answer. */
interface TextResult extends McpToolResult {
  content: Array<{ type: "text"; text: string }>;
}

/** The loopback server's tools (harness/mcp-server.ts): the client lists them at connect time, so its type cannot. */
interface LoopbackTools {
  add(input: { a: number; b: number }): TextResult;
  echo(input: { text: string }): TextResult;
  fail(input: object): TextResult;
  big(input: object): TextResult;
  nope(input: object): TextResult;
}
const loopback = (client: object) => mounted<McpClient & LoopbackTools>(client);

describe("itx.mcp.connect: a client on a remote MCP server", () => {
  test("lists the server's tools with their schemas and calls them; a tool's failure is a result", async ({ project: { itx } }) => {
    using client = loopback(await itx.mcp.connect({ url: server.url }));
    const description = await client.__describe();
    expect(description).toMatchObject({ kind: "mcp-client", url: server.url, server: { name: "loopback-test", version: "1.0.0" } });
    expect(description.instructions).toContain("A test server.");
    const add = description.tools.find((tool) => tool.name === "add");
    expect(add).toMatchObject({ description: "Adds two numbers", inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } });
    expect(add?.outputSchema).toMatchObject({ properties: { sum: { type: "number" } } });

    expect(await client.add({ a: 2, b: 3 })).toEqual({ content: [{ type: "text", text: "5" }], structuredContent: { sum: 5 } });
    expect(await client.invokeCapability({ path: ["echo"], args: [{ text: "hi" }] })).toEqual({ content: [{ type: "text", text: "hi" }] });
    expect(await client.fail({})).toEqual({ content: [{ type: "text", text: "it failed" }], isError: true });
    await expectCode(client.nope({}), "NOT_FOUND");
    // Deliberately malformed calls: the tool's type would refuse them at compile time.
    const loose = mounted<{ add(...args: unknown[]): TextResult }>(client);
    await expectCode(loose.add(1), "INVALID_ARGUMENT");
    await expectCode(loose.add({ a: 1, b: 2 }, "extra"), "INVALID_ARGUMENT");
  });

  test("bad connect input is INVALID_ARGUMENT and sends nothing", async ({ project: { itx } }) => {
    const before = server.received.length;
    for (const input of [undefined, "x", {}, { url: "ftp://127.0.0.1/mcp" }, { url: "not a url" }, { url: server.url, extra: 1 }, { url: server.url, headers: { a: 1 } }, { url: server.url, headers: { "bad name": "x" } }]) {
      // Deliberately malformed inputs: the contract's type would refuse them at compile time.
      await expectCode(itx.mcp.connect(input as { url: string }), "INVALID_ARGUMENT");
    }
    expect(server.received.length).toBe(before);
  });

  test("header placeholders are substituted in egress only, for the secret's URLs; others are refused unsent", async ({ project: { itx } }) => {
    await itx.secrets.get("/secrets/mcp").update({ material: MATERIAL, egress: { urls: [server.url] } });
    const before = server.received.length;
    using client = loopback(await itx.mcp.connect({ url: server.url, headers: { authorization: 'Bearer getSecret("/secrets/mcp")' } }));
    expect((await client.echo({ text: "ok" })).content[0]?.text).toBe("ok");
    const sent = server.received.slice(before);
    expect(sent.length).toBeGreaterThanOrEqual(3); // initialize, initialized, tools/list, tools/call
    for (const headers of sent) expect(headers.authorization).toBe(`Bearer ${MATERIAL}`);
    // An answer that echoes the material is scrubbed before it reaches the caller.
    const echoed = await client.echo({ text: `leak ${MATERIAL}` });
    expect(JSON.stringify(echoed)).not.toContain(MATERIAL);

    await itx.secrets.get("/secrets/elsewhere").update({ material: MATERIAL, egress: { urls: ["https://api.example.com/"] } });
    const count = server.received.length;
    await expectCode(itx.mcp.connect({ url: server.url, headers: { authorization: 'Bearer getSecret("/secrets/elsewhere")' } }), "EGRESS_REFUSED");
    expect(server.received.length).toBe(count);
  });

  test("the private-address guard refuses private destinations before anything is sent", async ({ project: { itx } }) => {
    const port = new URL(server.url).port;
    const before = server.received.length;
    for (const url of ["http://10.0.0.1/mcp", "http://169.254.169.254/mcp", `http://[::ffff:127.0.0.1]:${port}/mcp`, `http://127.0.0.2:${port}/mcp`, "http://metadata.google.internal/mcp"]) {
      await expectCode(itx.mcp.connect({ url }), "EGRESS_REFUSED");
    }
    expect(server.received.length).toBe(before);
  });

  test("a fetch shadow on the context carries the client's requests", async ({ project: { itx } }) => {
    const seen: string[] = [];
    const interception = await itx.egress.intercept(async (request: Request) => {
      const body = await request.text();
      seen.push(JSON.parse(body).method ?? "?");
      return fetch(request.url, { method: request.method, headers: request.headers, body });
    });
    using client = loopback(await itx.mcp.connect({ url: server.url }));
    expect((await client.add({ a: 1, b: 1 })).structuredContent).toEqual({ sum: 2 });
    expect(seen).toEqual(["initialize", "notifications/initialized", "tools/list", "tools/call"]);
    await interception.release();
  });

  test("a remote server cannot make the client hold more than the named limits", async ({ project: { itx } }) => {
    const many = await startMcpServer({ extraTools: 1001 });
    const big = await startMcpServer({ bigBytes: 4_194_304 + 1 });
    try {
      const tooMany = await expectCode(itx.mcp.connect({ url: many.url }), "LIMIT_EXCEEDED");
      expect(tooMany.details?.limit).toBe("MCP_REMOTE_TOOLS_MAX");
      using client = loopback(await itx.mcp.connect({ url: big.url }));
      const tooBig = await expectCode(client.big({}), "LIMIT_EXCEEDED");
      expect(tooBig.details?.limit).toBe("REMOTE_RESPONSE_MAX_BYTES");
      expect((await client.echo({ text: "still usable" })).content[0]?.text).toBe("still usable");
    } finally {
      await many.close();
      await big.close();
    }
  });

  test("itx.mcp.exa is a client on the deployment's MCP_EXA_URL", async ({ project: { itx } }) => {
    const port = inject("exaPort");
    if (port === 0) return; // against a BASE_URL deployment, exa is the real one: not reached from tests
    const exa = await startMcpServer({ port });
    try {
      const exaTools = mounted<{ web_search_exa(input: { query: string }): McpToolResult }>(itx.mcp.exa);
      expect(await exaTools.web_search_exa({ query: "workerd" })).toEqual({ content: [{ type: "text", text: "results for workerd" }] });
      const description = await itx.mcp.exa.__describe();
      expect(description.url).toBe(`http://127.0.0.1:${port}/mcp`);
    } finally {
      await exa.close();
    }
  });
});

/** An MCP SDK client on a project's MCP server, with a bearer token. */
async function projectClient(slug: string, token: string): Promise<Client> {
  const client = new Client({ name: "e2e", version: "1" });
  const transport = new StreamableHTTPClientTransport(new URL(`${target().baseUrl}/mcp/${slug}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return client;
}

async function tokenFor(admin: RpcStub<Session>, principal: string, projectIds: string[]): Promise<string> {
  return (await admin.issueToken({ principal, projectIds, ttlSeconds: 600 })).token;
}

function appendCall(padding: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "append", arguments: { events: [{ type: "note/added", payload: { padding } }] } } });
}

async function post(slug: string, token: string | undefined, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${target().baseUrl}/mcp/${slug}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body,
  });
}

describe("every project is an MCP server at /mcp/<project>", () => {
  test("the SDK client lists the policy's built-ins and the project's mounts, and calls them", async ({ admin, project: { projectId, slug, itx: provider } }) => {
    await provider.provideCapability({
      name: "greet",
      instructions: "Greets someone by name.",
      types: "(name: string) => string",
      capability: (name: string) => `hello ${name}`,
    });
    const client = await projectClient(slug, await tokenFor(admin, "mcp-user", [slug]));
    try {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(["whoami", "readEvents", "append", "greet"]));
      for (const hidden of ["run", "workers", "secrets", "provideCapability", "fetch"]) expect(names).not.toContain(hidden);
      const greet = tools.find((tool) => tool.name === "greet");
      expect(greet?.description).toContain("Greets someone by name.");
      expect(greet?.description).toContain("(name: string) => string");

      expect(await client.callTool({ name: "greet", arguments: { args: ["Ada"] } })).toMatchObject({
        content: [{ type: "text", text: '"hello Ada"' }],
        structuredContent: { result: "hello Ada" },
      });
      expect(await client.callTool({ name: "whoami", arguments: {} })).toMatchObject({ structuredContent: { result: { projectId, path: "/", principal: "mcp-user" } } });
      const appended = await client.callTool({ name: "append", arguments: { events: [{ type: "note/added", payload: { by: "mcp" } }] } });
      expect(appended.isError).toBeUndefined();
      const page = await client.callTool({ name: "readEvents", arguments: { limit: 500 } });
      const { result } = page.structuredContent as { result: { events: StreamEvent[] } };
      expect(result.events.map((event) => event.type)).toContain("note/added");
      await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toThrow(/not found/);
    } finally {
      await client.close();
    }
  });

  test("append runs no code: a run request, or any type a platform contract acts on, is refused and nothing runs", async ({ admin, project: { slug, itx } }) => {
    const client = await projectClient(slug, await tokenFor(admin, "mcp-runner", [slug]));
    try {
      // The root's capability host runs an enqueued request as its writer: appending one would be `run`.
      const script = "async (itx) => { await itx.append({ type: 'mcp/ran' }); return 1; }";
      const enqueue = await client.callTool({ name: "append", arguments: { events: [{ type: "events.iterate.com/itx/run-requested", payload: { script, enqueued: true } }] } });
      expect(enqueue.isError).toBe(true);
      expect(enqueue.structuredContent).toMatchObject({ code: "PERMISSION_DENIED" });
      // Open types a platform contract folds (the worker's heartbeat) and platform types alike.
      for (const type of ["events.iterate.com/project/heartbeat-triggered", "events.iterate.com/itx/capability-provided", "events.iterate.com/itx/later-added"]) {
        const result = await client.callTool({ name: "append", arguments: { events: [{ type: "note/added" }, { type, payload: { scheduleKey: "x" } }] } });
        expect(result.isError, type).toBe(true);
        expect(result.structuredContent, type).toMatchObject({ code: "PERMISSION_DENIED" });
      }
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const events = await itx.getEvents({ types: ["events.iterate.com/itx/run-requested", "events.iterate.com/itx/run-settled", "mcp/ran"] });
      expect(events.filter((event) => event.source.principal === "mcp-runner")).toEqual([]);
    } finally {
      await client.close();
    }
  });

  test("a live capability whose provider disconnected answers the MCP error, not a hang", async ({ os, admin, project: { projectId, slug }, connect }) => {
    const provider = connect({ auth: os.admin, projectId });
    await provider.provideCapability({ name: "soon", capability: () => "here" });
    const client = await projectClient(slug, await tokenFor(admin, "mcp-gone", [slug]));
    try {
      expect((await client.callTool({ name: "soon", arguments: {} })).structuredContent).toEqual({ result: "here" });
      provider[Symbol.dispose]();
      await expect
        .poll(async () => {
          const started = Date.now();
          const result = await client.callTool({ name: "soon", arguments: {} }, undefined, { timeout: 5000 });
          expect(Date.now() - started).toBeLessThan(5000);
          return result.isError ? (result.structuredContent as { code: string }).code : "still connected";
        }, { timeout: 10_000 })
        .toBe("CAPABILITY_DISCONNECTED");
      expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("soon");
    } finally {
      await client.close();
    }
  });

  test("confinement: another project looks exactly like a missing one; no token or a bad one is 401", async ({ os, admin, project: mine }) => {
    const theirs = await newProject("mcp-theirs");
    const token = await tokenFor(admin, "mcp-confined", [mine.slug]);
    const initialize = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } });
    const other = await post(theirs.slug, token, initialize);
    const otherById = await post(theirs.projectId, token, initialize);
    const missing = await post("no-such-project-anywhere", token, initialize);
    expect(other.status).toBe(404);
    const missingText = await missing.text();
    expect(await other.text()).toBe(missingText);
    expect(await otherById.text()).toBe(missingText);
    expect((await post(mine.slug, token, initialize)).status).toBe(200);

    const anonymous = await post(mine.slug, undefined, initialize);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await post(mine.slug, "not-a-token", initialize)).status).toBe(401);
    // The admin secret is not a bearer token here.
    expect((await post(mine.slug, os.adminSecret, initialize)).status).toBe(401);
  });

  test("a revoked token is refused once the 1 s its check may be reused has passed", async ({ admin, project: { slug } }) => {
    const issued = await admin.issueToken({ principal: "mcp-revoked", projectIds: [slug], ttlSeconds: 600 });
    const call = JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "whoami", arguments: {} } });
    expect((await post(slug, issued.token, call)).status).toBe(200);
    expect(await admin.tokens.revoke(issued.tokenId)).toEqual({ revoked: true });
    const revokedAt = Date.now();
    // STREAMS_HTTP_AUTH_CACHE_MS (apps/os/src/auth/request-cache.ts): past it, every isolate checks again.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, revokedAt + 1_100 - Date.now())));
    expect((await post(slug, issued.token, call)).status).toBe(401);
  });

  test("bad input gets the protocol's error and changes nothing", async ({ os, admin, project: { slug, itx } }) => {
    const token = await tokenFor(admin, "mcp-hostile", [slug]);
    // The project's own worker keeps writing its lifecycle facts meanwhile: count what the tool would write.
    const notes = async () => (await itx.getEvents({ types: ["note/added"] })).length;
    const before = await notes();

    const oversized = await post(slug, token, appendCall("x".repeat(1_048_576)));
    expect(oversized.status).toBe(413);
    expect(await oversized.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 } });

    const deep = await post(slug, token, `${"[".repeat(65)}${"]".repeat(65)}`);
    expect(deep.status).toBe(400);
    expect((await deep.json()).error.code).toBe(-32600);

    const notJson = await post(slug, token, "{not json");
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).error.code).toBe(-32700);

    const batch = await post(slug, token, JSON.stringify(Array.from({ length: 33 }, () => JSON.parse(appendCall("b")))));
    expect(batch.status).toBe(400);

    const wrongType = await post(slug, token, appendCall("t"), { "content-type": "text/plain" });
    expect(wrongType.status).toBe(415);

    const get = await fetch(`${os.baseUrl}/mcp/${slug}`, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });
    expect(get.status).toBe(405);

    // Malformed params are the protocol's invalid params (-32602), not an internal error.
    for (const [method, params] of [
      ["tools/call", { name: 5 }],
      ["tools/call", { arguments: {} }],
      ["tools/call", { name: "append", arguments: "x" }],
      ["tools/call", { name: "append", arguments: [{ type: "note/added" }] }],
      ["tools/list", { cursor: 5 }],
    ] as const) {
      const response = await post(slug, token, JSON.stringify({ jsonrpc: "2.0", id: 9, method, params }));
      expect((await response.json()).error, `${method} ${JSON.stringify(params)}`).toMatchObject({ code: -32602, message: expect.stringContaining(`Invalid ${method} request`) });
    }

    expect(await notes()).toBe(before);
  });
});
