/**
 * The MCP SDK, loaded on first use. Evaluating it (hundreds of zod schemas) costs the isolate
 * that much at start-up, and most requests to the OS never speak MCP: a static import would make
 * every cold start pay for it.
 */
export type McpSdk = Awaited<ReturnType<typeof importSdk>>;

let loading: Promise<McpSdk> | undefined;

export function mcpSdk(): Promise<McpSdk> {
  loading ??= importSdk();
  return loading;
}

async function importSdk() {
  const [client, clientTransport, server, serverTransport, validation, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/validation/cfworker-provider.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  return {
    Client: client.Client,
    StreamableHTTPClientTransport: clientTransport.StreamableHTTPClientTransport,
    StreamableHTTPError: clientTransport.StreamableHTTPError,
    Server: server.Server,
    WebStandardStreamableHTTPServerTransport: serverTransport.WebStandardStreamableHTTPServerTransport,
    CfWorkerJsonSchemaValidator: validation.CfWorkerJsonSchemaValidator,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    CallToolRequestSchema: types.CallToolRequestSchema,
  };
}
