import { RpcTarget } from "cloudflare:workers";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ItxError } from "iterate/errors";
import type { McpTool, McpToolResult } from "iterate/types";
import { boundedTree } from "../api/json-bounds.ts";
import { LIMITS, limitDetails } from "../limits.ts";
import { installInvokeFallback } from "../itx/invoke-fallback.ts";
import { mcpErrorToItx, remoteFetch, type EgressFetch } from "./mcp-egress-fetch.ts";
import { mcpSdk } from "./mcp-sdk.ts";

/** Where a client connects and how: every request goes through `fetch`, the context's egress road. */
export interface McpClientOptions {
  url: string;
  headers: Record<string, string>;
  fetch: EgressFetch;
}

interface Connected {
  client: Client;
  tools: Map<string, McpTool>;
  server: { name: string; version: string } | undefined;
  instructions: string | undefined;
}

/**
 * A client on one remote MCP server (`itx.mcp.connect`): nothing is mounted and nothing is
 * appended. `__describe()` lists the server's tools with their schemas; any other property calls
 * the tool of that name (`client.search({ query })`, or `client["a.b"](...)` for a dotted name;
 * `invokeCapability({ path: [name], args: [arguments] })` reaches any name). A call answers the
 * tool's result `{ content, structuredContent?, isError? }`: a tool that failed is a result with
 * `isError: true`, not an exception.
 */
export class McpClientRpcTarget extends RpcTarget {
  readonly #url: string;
  readonly #connected: Promise<Connected>;

  constructor(options: McpClientOptions) {
    super();
    this.#url = options.url;
    this.#connected = open(options);
    // Observed here so a client that is never used leaves no unhandled rejection behind.
    this.#connected.catch(() => undefined);
  }

  /** Settles once the server has answered `initialize` and `tools/list`; throws what connecting threw. */
  async ready(): Promise<void> {
    await this.#connected;
  }

  async __describe() {
    const { tools, server, instructions } = await this.#connected;
    return {
      kind: "mcp-client" as const,
      url: this.#url,
      server: server ?? null,
      instructions:
        (instructions ? `${instructions}\n\n` : "") +
        "A remote MCP server: call a tool as client.<name>(arguments); the answer is { content, structuredContent?, isError? }.",
      children: Object.fromEntries([...tools.values()].map((tool) => [tool.name, (tool.description ?? tool.title ?? "").slice(0, 200)])),
      tools: [...tools.values()],
    };
  }

  /** Calls the tool named by the path (its segments joined by "."), with one arguments object. */
  async invokeCapability(input: { path: string[]; args: unknown[] }): Promise<McpToolResult> {
    const { client, tools } = await this.#connected;
    const name = Array.isArray(input?.path) ? input.path.join(".") : "";
    if (!tools.has(name)) throw new ItxError("NOT_FOUND", `the MCP server at ${this.#url} has no tool ${JSON.stringify(name.slice(0, 128))}`);
    const args = Array.isArray(input.args) ? input.args : [];
    const [toolArguments, ...rest] = args;
    if (rest.length > 0 || (toolArguments !== undefined && (typeof toolArguments !== "object" || toolArguments === null || Array.isArray(toolArguments)))) {
      throw new ItxError("INVALID_ARGUMENT", `an MCP tool takes one arguments object: client.${name}({ ... })`);
    }
    try {
      const result = await client.callTool({ name, arguments: (toolArguments ?? {}) as Record<string, unknown> }, undefined, {
        timeout: LIMITS.MCP_REMOTE_REQUEST_TIMEOUT_MS,
      });
      return plainResult(result);
    } catch (error) {
      throw await mcpErrorToItx(error, this.#url);
    }
  }

  /** Ends the client (its session, when the server keeps one). */
  async [Symbol.dispose](): Promise<void> {
    const connected = await this.#connected.catch(() => undefined);
    await connected?.client.close().catch(() => undefined);
  }
}
installInvokeFallback(McpClientRpcTarget);

async function open(options: McpClientOptions): Promise<Connected> {
  const { Client, StreamableHTTPClientTransport, CfWorkerJsonSchemaValidator } = await mcpSdk();
  const transport = new StreamableHTTPClientTransport(new URL(options.url), {
    fetch: remoteFetch(options.fetch),
    requestInit: { headers: options.headers },
  });
  // The SDK's default validator compiles schemas to code, which workerd forbids.
  const client = new Client({ name: "iterate", version: "1" }, { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  const timeout = LIMITS.MCP_REMOTE_REQUEST_TIMEOUT_MS;
  try {
    await client.connect(transport, { timeout });
    const tools = new Map<string, McpTool>();
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= LIMITS.MCP_REMOTE_LIST_PAGES_MAX) {
        throw new ItxError("LIMIT_EXCEEDED", `the MCP server at ${options.url} pages its tools past ${LIMITS.MCP_REMOTE_LIST_PAGES_MAX} pages`, {
          details: limitDetails("MCP_REMOTE_LIST_PAGES_MAX"),
        });
      }
      const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout });
      for (const tool of listed.tools) {
        if (tools.size >= LIMITS.MCP_REMOTE_TOOLS_MAX) {
          throw new ItxError("LIMIT_EXCEEDED", `the MCP server at ${options.url} lists more than ${LIMITS.MCP_REMOTE_TOOLS_MAX} tools`, {
            details: limitDetails("MCP_REMOTE_TOOLS_MAX"),
          });
        }
        tools.set(tool.name, remoteTool(tool));
      }
      cursor = listed.nextCursor;
      if (cursor === undefined) break;
    }
    // Every schema together, as one tree: what __describe() will serialize.
    boundedTree([...tools.values()], LIMITS.REMOTE_SCHEMA_NODES_MAX, "REMOTE_SCHEMA_NODES_MAX");
    const version = client.getServerVersion();
    return {
      client,
      tools,
      server: version ? { name: String(version.name).slice(0, 256), version: String(version.version).slice(0, 64) } : undefined,
      instructions: client.getInstructions(),
    };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw await mcpErrorToItx(error, options.url);
  }
}

function remoteTool(tool: McpTool): McpTool {
  return {
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
  };
}

// The SDK's result objects are parsed JSON: copy out the documented fields, nothing else.
function plainResult(result: Record<string, unknown>): McpToolResult {
  const out: McpToolResult & Record<string, unknown> = { content: Array.isArray(result.content) ? (result.content as unknown[]) : [] };
  if (result.structuredContent !== undefined) out.structuredContent = result.structuredContent;
  if (result.isError === true) out.isError = true;
  if (result.toolResult !== undefined) out.toolResult = result.toolResult;
  return out;
}
