// Remote protocols: clients on MCP servers and OpenAPI-described HTTP APIs (no mount, no events).
import type { Description } from "./discovery.ts";

/** `itx.mcp`. */
export interface Mcp {
  /**
   * Connects to the MCP server at `url` (streamable HTTP) and lists its tools. `headers` go with
   * every request; values may hold secret placeholders (`getSecret("/secrets/x")`).
   */
  connect(input: { url: string; headers?: Record<string, string> }): McpClient;
  /** A client on Exa's MCP server (the deployment's MCP_EXA_URL); it connects on first use. */
  exa: McpClient;
}

/** One tool of a remote MCP server. */
export interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  outputSchema?: unknown;
}

/** What a tool call answers; a tool that failed answers `isError: true`. */
export interface McpToolResult {
  content: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * A client on one remote MCP server. Every other property is a tool: `client.search({ query })`
 * is one `tools/call` (a dotted name: `client["a.b"](...)` or `invokeCapability`).
 */
export interface McpClient {
  __describe(): Description & { kind: "mcp-client"; url: string; server: { name: string; version: string } | null; tools: McpTool[] };
  /** The explicit form of `client.<tool>(arguments)`: the path's segments joined by "." name the tool. */
  invokeCapability(input: { path: string[]; args: unknown[] }): McpToolResult;
}

/** `itx.openapi`. */
export interface OpenApi {
  /**
   * Reads an OpenAPI 3 document from `url` (through egress, with `headers`) or as `spec` (an
   * object, JSON or YAML text). Calls go to `baseUrl`, else the document's first server.
   */
  connect(input: { url?: string; spec?: unknown; baseUrl?: string; headers?: Record<string, string> }): OpenApiClient;
}

/** One operation of an OpenAPI document, with its `$ref`s resolved. */
export interface OpenApiOperation {
  operationId: string;
  method: string;
  path: string;
  summary?: string;
  description?: string;
  parameters: Array<{ name: string; in: "path" | "query" | "header" | "cookie"; required: boolean; description?: string; schema?: unknown }>;
  requestBody?: { required: boolean; contentType: string; schema?: unknown };
}

/** What an operation call answers: any HTTP status is a result. */
export interface OpenApiResult {
  status: number;
  contentType: string | null;
  /** Parsed when the answer is JSON, else text; null when empty. */
  body: unknown;
}

/**
 * A client on one HTTP API. Every other property is an operation by operationId:
 * `api.getPet({ petId: 1, body? })`, parameters by name, the request body as `body`.
 */
export interface OpenApiClient {
  __describe(): Description & { kind: "openapi-client"; baseUrl: string; title: string | null; version: string | null; operations: OpenApiOperation[] };
  invokeCapability(input: { path: string[]; args: unknown[] }): OpenApiResult;
}
