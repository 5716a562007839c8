import { RpcTarget } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import type { EgressFetch } from "./mcp-egress-fetch.ts";
import { McpClientRpcTarget } from "./mcp-client-rpc-target.ts";
import { parseRemoteHeaders, parseRemoteUrl, refuseUnknownFields } from "./remote-input.ts";

/** Exa's public MCP server, when the deployment names no other (`MCP_EXA_URL`). */
export const EXA_MCP_URL = "https://mcp.exa.ai/mcp";

/** What `itx.mcp` needs from its handle. */
export interface McpHost {
  fetch: EgressFetch;
  /** The deployment's `MCP_EXA_URL`. */
  exaUrl: string | undefined;
}

/** `itx.mcp`: clients on remote MCP servers, whose requests take this context's egress road. */
export class McpRpcTarget extends RpcTarget {
  readonly #host: McpHost;

  constructor(host: McpHost) {
    super();
    this.#host = host;
  }

  /**
   * Connects to the MCP server at `url` (streamable HTTP) and lists its tools. `headers` go with
   * every request; a value may hold a secret placeholder.
   * @example const exa = await itx.mcp.connect({ url: "https://mcp.exa.ai/mcp" }); await exa.web_search_exa({ query: "workerd" });
   */
  async connect(input: unknown): Promise<McpClientRpcTarget> {
    if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "mcp.connect takes { url, headers? }");
    refuseUnknownFields(input, ["url", "headers"], "mcp.connect");
    const { url, headers } = input as { url?: unknown; headers?: unknown };
    const client = new McpClientRpcTarget({ url: parseRemoteUrl(url, "mcp.connect"), headers: parseRemoteHeaders(headers, "mcp.connect"), fetch: this.#host.fetch });
    await client.ready();
    return client;
  }

  /** A client on Exa's MCP server (web search and page reading); it connects on first use. */
  get exa(): McpClientRpcTarget {
    const url = this.#host.exaUrl === undefined || this.#host.exaUrl === "" ? EXA_MCP_URL : this.#host.exaUrl;
    return new McpClientRpcTarget({ url, headers: {}, fetch: this.#host.fetch });
  }
}
