import { errorCode, ItxError } from "iterate/errors";
import { bufferedResponse } from "../egress/bounded-response.ts";
import { LIMITS } from "../limits.ts";
import { mcpSdk } from "./mcp-sdk.ts";

/** A context's egress road (`itx.fetch`): shadows, secret placeholders and the address guard. */
export type EgressFetch = (input: string, init?: RequestInit) => Promise<Response>;

/**
 * The fetch an MCP transport is given. Every request takes the context's egress road; every
 * answer is read whole under REMOTE_RESPONSE_MAX_BYTES (an SSE answer to a POST ends with its
 * response, so nothing is lost). The standalone GET stream for server-initiated messages is
 * answered 405 here, as a server without one would: a client target asks and is answered, it
 * does not listen, and a stream held open would outlive the call that opened it.
 */
export function remoteFetch(egress: EgressFetch): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    if (method === "GET") return new Response(null, { status: 405 });
    const { signal: _signal, ...rest } = init ?? {};
    const response = await egress(String(url), rest);
    return bufferedResponse(response, LIMITS.REMOTE_RESPONSE_MAX_BYTES, "REMOTE_RESPONSE_MAX_BYTES", LIMITS.MCP_REMOTE_REQUEST_TIMEOUT_MS);
  };
}

/**
 * A coded error for whatever an MCP exchange threw: the platform's own codes (EGRESS_REFUSED,
 * LIMIT_EXCEEDED, ...) pass through; the protocol's are mapped; anything else is UNAVAILABLE.
 */
export async function mcpErrorToItx(error: unknown, url: string): Promise<Error> {
  if (errorCode(error) !== undefined) return error as Error;
  const { McpError, ErrorCode: McpErrorCode, StreamableHTTPError } = await mcpSdk();
  if (error instanceof McpError) {
    const code =
      error.code === McpErrorCode.RequestTimeout
        ? "TIMEOUT"
        : error.code === McpErrorCode.InvalidParams || error.code === McpErrorCode.InvalidRequest
          ? "INVALID_ARGUMENT"
          : error.code === McpErrorCode.MethodNotFound
            ? "NOT_FOUND"
            : "UNAVAILABLE";
    return new ItxError(code, `the MCP server at ${url} answered: ${error.message.slice(0, 500)}`, { details: { mcpCode: error.code } });
  }
  if (error instanceof StreamableHTTPError) {
    return new ItxError("UNAVAILABLE", `the MCP server at ${url} answered HTTP ${error.code ?? "error"}`, { details: { status: error.code ?? null } });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ItxError("UNAVAILABLE", `the MCP server at ${url} could not be used: ${message.slice(0, 500)}`);
}
