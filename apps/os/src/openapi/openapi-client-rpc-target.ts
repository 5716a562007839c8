import { RpcTarget } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import { jsonDepth } from "iterate/stream/events";
import { readBounded } from "../egress/bounded-response.ts";
import { installInvokeFallback } from "../itx/invoke-fallback.ts";
import { LIMITS } from "../limits.ts";
import type { EgressFetch } from "../mcp/mcp-egress-fetch.ts";
import type { Operation, ParsedSpec } from "./openapi-spec.ts";

/** What one operation call answers: the HTTP status, the content type and the body (JSON when it is JSON). */
export interface OperationResult {
  status: number;
  contentType: string | null;
  body: unknown;
}

/**
 * A client on one HTTP API described by OpenAPI (`itx.openapi.connect`): nothing is mounted and
 * nothing is appended. `__describe()` lists the operations; any other property calls the
 * operation with that operationId: `api.getPet({ petId: 1 })`, with path, query and header
 * parameters by name and the request body as `body`. Any status is a result, not an exception;
 * the request takes the context's egress road.
 */
export class OpenApiClientRpcTarget extends RpcTarget {
  readonly #spec: ParsedSpec;
  readonly #baseUrl: string;
  readonly #headers: Record<string, string>;
  readonly #fetch: EgressFetch;

  constructor(options: { spec: ParsedSpec; baseUrl: string; headers: Record<string, string>; fetch: EgressFetch }) {
    super();
    this.#spec = options.spec;
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#headers = options.headers;
    this.#fetch = options.fetch;
  }

  __describe() {
    return {
      kind: "openapi-client" as const,
      baseUrl: this.#baseUrl,
      title: this.#spec.title ?? null,
      version: this.#spec.version ?? null,
      instructions:
        "An HTTP API: call an operation as client.<operationId>({ ...parameters, body? }); the answer is { status, contentType, body }.",
      children: Object.fromEntries([...this.#spec.operations.values()].map((op) => [op.operationId, (op.summary ?? `${op.method} ${op.path}`).slice(0, 200)])),
      operations: [...this.#spec.operations.values()],
    };
  }

  /** Calls the operation named by the path (its segments joined by "."), with one parameters object. */
  async invokeCapability(input: { path: string[]; args: unknown[] }): Promise<OperationResult> {
    const id = Array.isArray(input?.path) ? input.path.join(".") : "";
    const operation = this.#spec.operations.get(id);
    if (!operation) throw new ItxError("NOT_FOUND", `the API at ${this.#baseUrl} has no operation ${JSON.stringify(id.slice(0, 128))}`);
    const args = Array.isArray(input.args) ? input.args : [];
    const [params, ...rest] = args;
    if (rest.length > 0 || (params !== undefined && (typeof params !== "object" || params === null || Array.isArray(params)))) {
      throw new ItxError("INVALID_ARGUMENT", `an operation takes one parameters object: client.${id}({ ... })`);
    }
    const request = buildRequest(this.#baseUrl, operation, (params ?? {}) as Record<string, unknown>, this.#headers);
    const response = await this.#fetch(request.url, request.init);
    const bytes = await readBounded(response, LIMITS.REMOTE_RESPONSE_MAX_BYTES, "REMOTE_RESPONSE_MAX_BYTES", LIMITS.MCP_REMOTE_REQUEST_TIMEOUT_MS);
    const contentType = response.headers.get("content-type");
    return { status: response.status, contentType, body: decodeBody(bytes, contentType) };
  }
}
installInvokeFallback(OpenApiClientRpcTarget);

/** The request for one call: parameters placed by their `in`, the body encoded by the declared type. */
export function buildRequest(baseUrl: string, operation: Operation, params: Record<string, unknown>, headers: Record<string, string>): { url: string; init: RequestInit } {
  const known = new Set(operation.parameters.map((parameter) => parameter.name));
  const unknown = Object.keys(params).filter((name) => name !== "body" && !known.has(name));
  if (unknown.length > 0) throw new ItxError("INVALID_ARGUMENT", `${operation.operationId} has no parameter(s) ${unknown.slice(0, 5).join(", ")}`);
  let path = operation.path;
  const query = new URLSearchParams();
  const sent = new Headers(headers);
  for (const parameter of operation.parameters) {
    const value = params[parameter.name];
    if (value === undefined) {
      if (parameter.required) throw new ItxError("INVALID_ARGUMENT", `${operation.operationId} needs the ${parameter.in} parameter ${parameter.name}`);
      continue;
    }
    if (parameter.in === "path") path = path.split(`{${parameter.name}}`).join(pathSegment(operation, parameter.name, value));
    else if (parameter.in === "query") for (const item of Array.isArray(value) ? value : [value]) query.append(parameter.name, scalar(item, parameter.name));
    else if (parameter.in === "header") sent.set(parameter.name, scalar(value, parameter.name));
    else throw new ItxError("INVALID_ARGUMENT", `${operation.operationId}: cookie parameters are not sent; set a cookie header in connect's headers`);
  }
  const init: RequestInit = { method: operation.method, headers: sent };
  const body = params.body;
  if (body !== undefined) {
    if (!operation.requestBody) throw new ItxError("INVALID_ARGUMENT", `${operation.operationId} takes no body`);
    const type = operation.requestBody.contentType;
    sent.set("content-type", type);
    if (/json/i.test(type)) init.body = JSON.stringify(body);
    else if (/x-www-form-urlencoded/i.test(type) && typeof body === "object" && body !== null) {
      init.body = new URLSearchParams(Object.entries(body).map(([key, value]) => [key, scalar(value, key)])).toString();
    } else if (typeof body === "string") init.body = body;
    else throw new ItxError("INVALID_ARGUMENT", `${operation.operationId} takes a ${type} body as a string`);
  } else if (operation.requestBody?.required) throw new ItxError("INVALID_ARGUMENT", `${operation.operationId} needs a body`);
  const search = query.toString();
  return { url: `${baseUrl}${path}${search ? `?${search}` : ""}`, init };
}

// encodeURIComponent leaves dots alone, and the URL parser reads "." and ".." (even as %2E) as
// dot segments: `/users/{id}/keys` with id ".." would reach `/keys`. Such a value is refused.
function pathSegment(operation: Operation, name: string, value: unknown): string {
  const text = scalar(value, name);
  if (text === "." || text === "..") {
    throw new ItxError("INVALID_ARGUMENT", `${operation.operationId}: the path parameter ${name} cannot be "${text}" (it would change the request's path)`);
  }
  return encodeURIComponent(text);
}

function scalar(value: unknown, name: string): string {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return String(value);
  throw new ItxError("INVALID_ARGUMENT", `the parameter ${name} is a string, number or boolean`);
}

const UTF8 = new TextDecoder();

// JSON when it says so and parses within the depth bound; text otherwise (bytes that are not
// UTF-8 are replaced, not thrown on).
function decodeBody(bytes: Uint8Array, contentType: string | null): unknown {
  if (bytes.byteLength === 0) return null;
  const text = UTF8.decode(bytes);
  if (contentType && /\bjson\b/i.test(contentType) && jsonDepth(text, LIMITS.REMOTE_JSON_MAX_DEPTH) <= LIMITS.REMOTE_JSON_MAX_DEPTH) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
