import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { connectItx } from "iterate/client";
import { interleave, report, reportTail, summarize } from "./stats.ts";
import type { BenchTarget } from "./target.ts";

// oxlint-disable typescript/no-explicit-any -- capability paths are dynamic by design

const CALLS = 300;

/**
 * An MCP tool call to a mounted live capability (the SDK's client against `/mcp/<project>`, a
 * bearer token, one HTTP POST per call) against the same call over Cap'n Web (one WebSocket
 * session, authenticated once), interleaved in one run, beside a bare `GET /health` (the floor
 * every HTTP request pays).
 */
export async function measureMcp(target: BenchTarget): Promise<void> {
  const auth = { type: "admin-secret" as const, secret: target.adminSecret };
  // Node runs these files as they are and does not parse `using`: sessions are disposed below.
  const admin: any = connectItx({ baseUrl: target.baseUrl, auth });
  const provider: any = connectItx({ baseUrl: target.baseUrl, auth });
  const caller: any = connectItx({ baseUrl: target.baseUrl, auth });
  const sessions = [admin, provider, caller];
  const slug = `bench-mcp-${Date.now().toString(36)}`;
  const { projectId } = await admin.projects.create({ slug }).whoami();
  await provider.projects.get(projectId).provideCapability({ name: "echo", capability: (value: number) => value });
  const itx = caller.projects.get(projectId);
  const { token } = await admin.issueToken({ principal: "bench-mcp", projectIds: [slug], ttlSeconds: 3600 });
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${target.baseUrl}/mcp/${slug}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  try {
    for (let i = 0; i < 30; i++) {
      await itx.echo(i);
      await client.callTool({ name: "echo", arguments: { args: [i] } });
    }
    const samples = await interleave(CALLS, {
      capnweb: () => itx.echo(1),
      mcp: () => client.callTool({ name: "echo", arguments: { args: [1] } }),
      mcpBuiltIn: () => client.callTool({ name: "whoami", arguments: {} }),
      // The floor of any HTTP request to this OS (locally: Node's fetch, then wrangler dev's proxy
      // in front of workerd): what an MCP call pays before the route does anything.
      health: async () => (await fetch(`${target.baseUrl}/health`)).text(),
    });
    const capnweb = summarize(samples.capnweb);
    const mcp = summarize(samples.mcp);
    report("mcp.tool_call_live_capability.median", mcp.median, "ms");
    reportTail("mcp.tool_call_live_capability", mcp);
    report("mcp.capnweb_same_call.median", capnweb.median, "ms");
    reportTail("mcp.capnweb_same_call", capnweb);
    report("mcp.tool_call_ratio_to_capnweb", mcp.median / capnweb.median, "x (reported, no target)");
    const builtIn = summarize(samples.mcpBuiltIn);
    report("mcp.tool_call_built_in_whoami.median", builtIn.median, "ms");
    reportTail("mcp.tool_call_built_in_whoami", builtIn);
    report("mcp.http_request_floor_health.median", summarize(samples.health).median, "ms");
  } finally {
    await client.close();
    for (const session of sessions) session[Symbol.dispose]();
  }
}
