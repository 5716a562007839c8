import { RpcTarget } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import { readBounded } from "../egress/bounded-response.ts";
import { LIMITS } from "../limits.ts";
import type { EgressFetch } from "../mcp/mcp-egress-fetch.ts";
import { parseRemoteHeaders, parseRemoteUrl, refuseUnknownFields } from "../mcp/remote-input.ts";
import { OpenApiClientRpcTarget } from "./openapi-client-rpc-target.ts";
import { parseSpec } from "./openapi-spec.ts";

/** `itx.openapi`: clients on HTTP APIs described by OpenAPI 3, whose requests take this context's egress road. */
export class OpenApiRpcTarget extends RpcTarget {
  readonly #fetch: EgressFetch;

  constructor(host: { fetch: EgressFetch }) {
    super();
    this.#fetch = host.fetch;
  }

  /**
   * Reads an OpenAPI 3 document, from `url` (fetched through egress with `headers`) or given as
   * `spec` (an object, or JSON or YAML text), and answers a client on its operations. Requests go
   * to `baseUrl`, else the document's first server (resolved against `url`).
   * @example const pets = await itx.openapi.connect({ url: "https://api.example.com/openapi.json" }); await pets.getPet({ petId: 1 });
   */
  async connect(input: unknown): Promise<OpenApiClientRpcTarget> {
    if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "openapi.connect takes { url | spec, baseUrl?, headers? }");
    refuseUnknownFields(input, ["url", "spec", "baseUrl", "headers"], "openapi.connect");
    const raw = input as { url?: unknown; spec?: unknown; baseUrl?: unknown; headers?: unknown };
    if ((raw.url === undefined) === (raw.spec === undefined)) throw new ItxError("INVALID_ARGUMENT", "openapi.connect takes either url or spec");
    const headers = parseRemoteHeaders(raw.headers, "openapi.connect");
    const url = raw.url === undefined ? undefined : parseRemoteUrl(raw.url, "openapi.connect");
    const source = url === undefined ? raw.spec : await this.#download(url, headers);
    const spec = await parseSpec(source);
    const base = raw.baseUrl !== undefined ? parseRemoteUrl(raw.baseUrl, "openapi.connect baseUrl") : serverBase(spec.serverUrl, url);
    return new OpenApiClientRpcTarget({ spec, baseUrl: base, headers, fetch: this.#fetch });
  }

  async #download(url: string, headers: Record<string, string>): Promise<string> {
    const response = await this.#fetch(url, { headers: { accept: "application/json, application/yaml;q=0.9, */*;q=0.1", ...headers } });
    if (!response.ok) {
      void response.body?.cancel();
      throw new ItxError("UNAVAILABLE", `the OpenAPI document at ${url} answered HTTP ${response.status}`, { details: { status: response.status } });
    }
    const bytes = await readBounded(response, LIMITS.REMOTE_RESPONSE_MAX_BYTES, "REMOTE_RESPONSE_MAX_BYTES", LIMITS.MCP_REMOTE_REQUEST_TIMEOUT_MS);
    return new TextDecoder().decode(bytes);
  }
}

// The document's first server, resolved against where the document came from.
function serverBase(serverUrl: string | undefined, documentUrl: string | undefined): string {
  try {
    if (serverUrl !== undefined) return parseRemoteUrl(new URL(serverUrl, documentUrl).toString(), "the document's server");
  } catch {
    // fall through: a relative server with no document URL to resolve it against
  }
  if (documentUrl !== undefined && serverUrl === undefined) return new URL("/", documentUrl).toString();
  throw new ItxError("INVALID_ARGUMENT", "openapi.connect needs baseUrl: the document names no absolute server");
}
