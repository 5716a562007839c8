import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { listenOnLoopback } from "./loopback-server.ts";

export interface McpTestServer {
  url: string;
  /** Headers of every request the server received, in order. */
  received: IncomingHttpHeaders[];
  close(): Promise<void>;
}

export interface McpTestServerOptions {
  port?: number;
  /** Extra tools beyond the standard ones, to cross the client's tool-list bound. */
  extraTools?: number;
  /** Bytes of text the `big` tool answers. */
  bigBytes?: number;
}

/**
 * An MCP server made with the official SDK, on loopback, speaking streamable HTTP (stateless,
 * JSON answers). Tools: `add({ a, b })`, `echo({ text })`, `fail()` (a tool error), `big()` and
 * `web_search_exa({ query })` (shaped like Exa's, for `itx.mcp.exa`).
 */
export async function startMcpServer(options: McpTestServerOptions = {}): Promise<McpTestServer> {
  const received: IncomingHttpHeaders[] = [];
  const build = () => {
    const mcp = new McpServer({ name: "loopback-test", version: "1.0.0" }, { instructions: "A test server." });
    mcp.registerTool("add", { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } }, ({ a, b }) => ({
      content: [{ type: "text", text: String(a + b) }],
      structuredContent: { sum: a + b },
    }));
    mcp.registerTool("echo", { description: "Echoes text", inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: "text", text }] }));
    mcp.registerTool("fail", { description: "Always fails" }, () => ({ isError: true, content: [{ type: "text", text: "it failed" }] }));
    mcp.registerTool("big", { description: "A large answer" }, () => ({ content: [{ type: "text", text: "x".repeat(options.bigBytes ?? 10) }] }));
    mcp.registerTool("web_search_exa", { description: "Search the web", inputSchema: { query: z.string() } }, ({ query }) => ({
      content: [{ type: "text", text: `results for ${query}` }],
    }));
    for (let index = 0; index < (options.extraTools ?? 0); index++) {
      mcp.registerTool(`extra_${index}`, { description: `extra ${index}` }, () => ({ content: [] }));
    }
    return mcp;
  };
  const server: Server = createServer(async (request, response) => {
    received.push(request.headers);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString();
    const mcp = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(request, response, text ? JSON.parse(text) : undefined);
  });
  const { origin, close } = await listenOnLoopback(server, options.port ?? 0);
  return {
    url: `${origin}/mcp`,
    received,
    close,
  };
}
