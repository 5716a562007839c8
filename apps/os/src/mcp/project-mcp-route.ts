import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { CallToolRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { errorCode } from "iterate/errors";
import { jsonDepth } from "iterate/stream/events";
import { readBounded } from "../egress/bounded-response.ts";
import { ItxRpcTarget } from "../itx/itx-rpc-target.ts";
import { LIMITS } from "../limits.ts";
import { ProjectAccess } from "../project/project-collection.ts";
import { findProject } from "../project/project-directory.ts";
import { authenticateRequest, bearerLane } from "../auth/request-auth.ts";
import { ShortCache } from "../auth/request-cache.ts";
import { mcpSdk, type McpSdk } from "./mcp-sdk.ts";
import { isMountToolName, MCP_BUILT_IN_TOOLS, projectTools, toolResult } from "./project-mcp-tools.ts";

// JSON-RPC's error codes, as the route answers them before the SDK is loaded.
const ErrorCode = { ParseError: -32700, InvalidRequest: -32600, InvalidParams: -32602, ConnectionClosed: -32000 } as const;

/** The path prefix of every project's MCP server: `/mcp/<project slug or id>`. */
export const MCP_ROUTE_PREFIX = "/mcp/";

// Directory records reused by this isolate for STREAMS_HTTP_AUTH_CACHE_MS (1 s), as /streams does.
const projects = new ShortCache<Awaited<ReturnType<typeof findProject>>>();

// How long a body may take to arrive: a client that trickles bytes does not hold the request open.
const BODY_READ_TIMEOUT_MS = 30_000;

/**
 * A project's MCP server over streamable HTTP (stateless: every POST is answered on its own, as
 * JSON). Order matters: the bearer token is checked before anything else is read, the project
 * is found (another principal's project answers exactly like a missing one), then the body is
 * read and parsed under MCP_REQUEST_BODY_MAX_BYTES, MCP_JSON_MAX_DEPTH and MCP_BATCH_MAX_MESSAGES.
 * Answers undefined for paths that are not its own.
 *
 * A token that checked out, and the project's directory record, are reused by this isolate for
 * STREAMS_HTTP_AUTH_CACHE_MS (1 s), exactly as on /streams: a token revoked now still calls tools
 * here for at most that long (an open Cap'n Web session ends at once). Refusals are never cached.
 */
export async function serveProjectMcp(request: Request, env: Env): Promise<Response | undefined> {
  const url = new URL(request.url);
  if (!url.pathname.startsWith(MCP_ROUTE_PREFIX)) return undefined;
  const project = decodeSegment(url.pathname.slice(MCP_ROUTE_PREFIX.length));
  if (project === undefined) return notFound();

  const token = /^Bearer +(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  if (token === undefined) return unauthorized("a bearer token is required");
  let principal;
  try {
    principal = await authenticateRequest(env, request, [bearerLane]);
  } catch (error) {
    if (errorCode(error) === "UNAUTHENTICATED" || errorCode(error) === "INVALID_ARGUMENT") return unauthorized("the bearer token is not valid");
    throw error;
  }
  const record = await projects.get(project, () => findProject(env, project));
  if (!record || !new ProjectAccess(principal).allows(record)) return notFound();

  if (request.method !== "POST") {
    // Stateless: no standalone SSE stream to GET, no session to DELETE.
    return rpcError(405, ErrorCode.ConnectionClosed, "this MCP server is stateless: POST JSON-RPC messages", { allow: "POST" });
  }
  const parsed = await readBody(request);
  if (parsed instanceof Response) return parsed;

  const itx = new ItxRpcTarget({ env, principal: principal.id, projectId: record.projectId, path: "/", origin: "/" });
  const sdk = await mcpSdk();
  const server = projectServer(sdk, itx, record.slug);
  const transport = new sdk.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: parsed });
  } finally {
    await server.close().catch(() => undefined);
  }
}

// The SDK checks a request against its handler's schema before the handler runs and answers a
// mismatch as an internal error (-32603). Registered under schemas that only name the method, a
// request whose params are malformed reaches the checks that answer it as invalid params
// (-32602): the SDK's own for tools/call (its Server checks CallToolRequestSchema), ours for tools/list.
const CALL_TOOL = z.looseObject({ method: z.literal("tools/call") });
const LIST_TOOLS = z.looseObject({ method: z.literal("tools/list") });

function projectServer(sdk: McpSdk, itx: ItxRpcTarget, slug: string): Server {
  const { CfWorkerJsonSchemaValidator, ListToolsRequestSchema, McpError } = sdk;
  const server = new sdk.Server(
    { name: `iterate project ${slug}`, version: "1" },
    {
      capabilities: { tools: {} },
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      instructions: `The capabilities of the iterate project "${slug}": its mounts (call with { args: [...] }) and a few built-ins.`,
    },
  );
  server.setRequestHandler(LIST_TOOLS, async (request) => {
    const checked = ListToolsRequestSchema.safeParse(request);
    if (!checked.success) throw new McpError(ErrorCode.InvalidParams, `Invalid tools/list request: ${checked.error.message}`);
    const { builtIns, mounts } = await projectTools(itx);
    // A mount whose provider is gone is not offered; a client that listed it earlier gets its error.
    return { tools: [...builtIns, ...mounts.filter((mount) => mount.connected).map(({ path: _path, connected: _connected, ...tool }) => tool)] };
  });
  server.setRequestHandler(CALL_TOOL, async (request) => {
    // Checked against CallToolRequestSchema by the SDK before this runs.
    const params = request.params as CallToolRequest["params"];
    const name = params.name;
    const args = (params.arguments ?? {}) as Record<string, unknown>;
    const builtIn = Object.hasOwn(MCP_BUILT_IN_TOOLS, name) ? MCP_BUILT_IN_TOOLS[name as keyof typeof MCP_BUILT_IN_TOOLS] : undefined;
    if (builtIn) return toolResult(() => builtIn.call(itx, args));
    // A mount's tool name is its path joined by ".": the call goes straight to the path, with no
    // describe first. A path nothing is mounted at is the protocol's unknown tool.
    if (!isMountToolName(name)) throw new McpError(ErrorCode.InvalidParams, `Tool ${name.slice(0, 128)} not found`);
    const extra = Object.keys(args).filter((key) => key !== "args");
    if (extra.length > 0 || (args.args !== undefined && !Array.isArray(args.args))) {
      throw new McpError(ErrorCode.InvalidParams, `Tool ${name} takes { args: [...] }`);
    }
    const result = await toolResult(() => itx.invokeCapability({ path: name.split("."), args: (args.args ?? []) as unknown[] }));
    if (result.isError && result.structuredContent?.code === "NOT_FOUND" && result.structuredContent.unresolved === name) {
      throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
    }
    return result;
  });
  return server;
}

async function readBody(request: Request): Promise<unknown> {
  let bytes: Uint8Array;
  try {
    bytes = await readBounded(request, LIMITS.MCP_REQUEST_BODY_MAX_BYTES, "MCP_REQUEST_BODY_MAX_BYTES", BODY_READ_TIMEOUT_MS, { cancel: false });
  } catch (error) {
    if (errorCode(error) === "LIMIT_EXCEEDED") return rpcError(413, ErrorCode.InvalidRequest, `a request body is at most ${LIMITS.MCP_REQUEST_BODY_MAX_BYTES} bytes`);
    return rpcError(400, ErrorCode.ParseError, "the request body could not be read");
  }
  const text = new TextDecoder().decode(bytes);
  if (jsonDepth(text, LIMITS.MCP_JSON_MAX_DEPTH) > LIMITS.MCP_JSON_MAX_DEPTH) {
    return rpcError(400, ErrorCode.InvalidRequest, `JSON nests at most ${LIMITS.MCP_JSON_MAX_DEPTH} deep`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return rpcError(400, ErrorCode.ParseError, "Parse error: the body is not JSON");
  }
  if (Array.isArray(body) && body.length > LIMITS.MCP_BATCH_MAX_MESSAGES) {
    return rpcError(400, ErrorCode.InvalidRequest, `a batch holds at most ${LIMITS.MCP_BATCH_MAX_MESSAGES} messages`);
  }
  return body;
}

function decodeSegment(rest: string): string | undefined {
  if (rest.length === 0 || rest.length > 128 || rest.includes("/")) return undefined;
  try {
    return decodeURIComponent(rest);
  } catch {
    return undefined;
  }
}

function rpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });
}

function unauthorized(message: string): Response {
  return rpcError(401, ErrorCode.ConnectionClosed, message, { "www-authenticate": 'Bearer realm="iterate"' });
}

// The same bytes for a project that does not exist and one this token may not reach.
function notFound(): Response {
  return Response.json({ code: "NOT_FOUND", message: "no such route" }, { status: 404 });
}
