import { ItxError } from "iterate/errors";
import { jsonDepth } from "iterate/stream/events";
import { boundedTree } from "../api/json-bounds.ts";
import { LIMITS, limitDetails } from "../limits.ts";
import { assertExpandedSize } from "./reference-size.ts";

/** One parameter of an operation, after `$ref`s are resolved. */
export interface OperationParameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required: boolean;
  description?: string;
  schema?: unknown;
}

/** One operation of an OpenAPI document, keyed by its operationId. */
export interface Operation {
  operationId: string;
  method: string;
  path: string;
  summary?: string;
  description?: string;
  parameters: OperationParameter[];
  requestBody?: { required: boolean; contentType: string; schema?: unknown };
}

export interface ParsedSpec {
  title: string | undefined;
  version: string | undefined;
  /** The first server's URL with its variables at their defaults, possibly relative. */
  serverUrl: string | undefined;
  operations: Map<string, Operation>;
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
const OPERATION_ID = /^[A-Za-z_$][A-Za-z0-9_$.-]{0,127}$/;

/**
 * Parses an OpenAPI 3.x document (JSON or YAML text, or an object) into its operations. Local
 * `$ref`s are resolved by @apidevtools/json-schema-ref-parser; external ones are not followed
 * (they would be requests that bypass egress). Bounds: REMOTE_JSON_MAX_DEPTH on the text,
 * OPENAPI_YAML_MAX_CHARS on YAML text,
 * REMOTE_SCHEMA_NODES_MAX on the document and on the operations once references are expanded,
 * OPENAPI_OPERATIONS_MAX operations. Bad documents are INVALID_ARGUMENT.
 */
export async function parseSpec(source: unknown): Promise<ParsedSpec> {
  // Loaded on first use, like the MCP SDK: most requests never read a document.
  const [{ default: $RefParser }, { load: loadYaml }] = await Promise.all([import("@apidevtools/json-schema-ref-parser"), import("js-yaml")]);
  const document = boundedTree(toDocument(source, loadYaml), LIMITS.REMOTE_SCHEMA_NODES_MAX, "REMOTE_SCHEMA_NODES_MAX");
  if (typeof document !== "object" || document === null || Array.isArray(document)) throw invalid("an OpenAPI document is an object");
  const version = (document as { openapi?: unknown }).openapi;
  if (typeof version !== "string" || !/^3\.[01]\.\d+$/.test(version)) {
    throw invalid("only OpenAPI 3.0 and 3.1 documents are read (convert Swagger 2.0 first)");
  }
  assertExpandedSize(document, LIMITS.REMOTE_SCHEMA_NODES_MAX, "REMOTE_SCHEMA_NODES_MAX");
  let dereferenced: Record<string, unknown>;
  try {
    dereferenced = (await new $RefParser().dereference(document as Record<string, unknown>, {
      resolve: { external: false },
      // Cycles become shared objects here, cut to `{ $ref: "#circular" }` by boundedTree below.
      dereference: { circular: true },
    })) as Record<string, unknown>;
  } catch (cause) {
    throw invalid(`the document's references do not resolve: ${cause instanceof Error ? cause.message.slice(0, 300) : "unknown"}`);
  }
  const operations = collectOperations(dereferenced.paths);
  // Expanded references are shared objects: bound the tree __describe() will serialize.
  const bounded = boundedTree([...operations.values()], LIMITS.REMOTE_SCHEMA_NODES_MAX, "REMOTE_SCHEMA_NODES_MAX") as Operation[];
  const info = (dereferenced.info ?? {}) as { title?: unknown; version?: unknown };
  return {
    title: typeof info.title === "string" ? info.title.slice(0, 256) : undefined,
    version: typeof info.version === "string" ? info.version.slice(0, 64) : undefined,
    serverUrl: firstServerUrl(dereferenced.servers),
    operations: new Map(bounded.map((operation) => [operation.operationId, operation])),
  };
}

function toDocument(source: unknown, loadYaml: (text: string, options: { maxDepth: number }) => unknown): unknown {
  if (typeof source !== "string") return source;
  if (jsonDepth(source, LIMITS.REMOTE_JSON_MAX_DEPTH) > LIMITS.REMOTE_JSON_MAX_DEPTH) {
    throw new ItxError("INVALID_ARGUMENT", `an OpenAPI document nests deeper than ${LIMITS.REMOTE_JSON_MAX_DEPTH}`, { details: limitDetails("REMOTE_JSON_MAX_DEPTH") });
  }
  if (/^\s*\{/.test(source)) return parsedDocument(() => JSON.parse(source));
  if (source.length > LIMITS.OPENAPI_YAML_MAX_CHARS) {
    throw new ItxError("LIMIT_EXCEEDED", `an OpenAPI document in YAML is at most ${LIMITS.OPENAPI_YAML_MAX_CHARS} characters (serve a larger one as JSON)`, {
      details: limitDetails("OPENAPI_YAML_MAX_CHARS"),
    });
  }
  return parsedDocument(() => loadYaml(source, { maxDepth: LIMITS.REMOTE_JSON_MAX_DEPTH }));
}

function parsedDocument(parse: () => unknown): unknown {
  try {
    return parse();
  } catch (cause) {
    throw invalid(`the document is neither JSON nor YAML: ${cause instanceof Error ? cause.message.slice(0, 200) : "unknown"}`);
  }
}

function collectOperations(paths: unknown): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  if (typeof paths !== "object" || paths === null) return operations;
  for (const [path, item] of Object.entries(paths as Record<string, unknown>)) {
    if (typeof item !== "object" || item === null || !path.startsWith("/")) continue;
    const shared = parameters((item as { parameters?: unknown }).parameters);
    for (const method of METHODS) {
      const operation = (item as Record<string, unknown>)[method] as Record<string, unknown> | undefined;
      if (typeof operation !== "object" || operation === null) continue;
      const id = operation.operationId;
      if (typeof id !== "string" || !OPERATION_ID.test(id)) continue; // an operation without a usable id has no name to call
      if (operations.has(id)) throw invalid(`the operationId ${JSON.stringify(id)} is used twice`);
      if (operations.size >= LIMITS.OPENAPI_OPERATIONS_MAX) {
        throw new ItxError("LIMIT_EXCEEDED", `an OpenAPI document declares more than ${LIMITS.OPENAPI_OPERATIONS_MAX} operations`, {
          details: limitDetails("OPENAPI_OPERATIONS_MAX"),
        });
      }
      // Operation parameters override path-level ones of the same name and location.
      const own = parameters(operation.parameters);
      const merged = [...shared.filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)), ...own];
      const body = requestBody(operation.requestBody);
      operations.set(id, {
        operationId: id,
        method: method.toUpperCase(),
        path,
        ...(typeof operation.summary === "string" ? { summary: operation.summary } : {}),
        ...(typeof operation.description === "string" ? { description: operation.description } : {}),
        parameters: merged,
        ...(body ? { requestBody: body } : {}),
      });
    }
  }
  return operations;
}

function parameters(list: unknown): OperationParameter[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry): OperationParameter[] => {
    if (typeof entry !== "object" || entry === null) return [];
    const { name, in: where, required, description, schema } = entry as Record<string, unknown>;
    if (typeof name !== "string" || (where !== "path" && where !== "query" && where !== "header" && where !== "cookie")) return [];
    return [{ name, in: where, required: where === "path" || required === true, ...(typeof description === "string" ? { description } : {}), ...(schema !== undefined ? { schema } : {}) }];
  });
}

function requestBody(body: unknown): Operation["requestBody"] {
  if (typeof body !== "object" || body === null) return undefined;
  const content = (body as { content?: unknown }).content;
  if (typeof content !== "object" || content === null) return undefined;
  const types = Object.keys(content);
  // JSON first; otherwise the first declared type.
  const contentType = types.find((type) => /^application\/([a-z.+-]*\+)?json\b/i.test(type)) ?? types[0];
  if (contentType === undefined) return undefined;
  const schema = ((content as Record<string, { schema?: unknown }>)[contentType] ?? {}).schema;
  return { required: (body as { required?: unknown }).required === true, contentType, ...(schema !== undefined ? { schema } : {}) };
}

function firstServerUrl(servers: unknown): string | undefined {
  if (!Array.isArray(servers)) return undefined;
  const server = servers[0] as { url?: unknown; variables?: Record<string, { default?: unknown }> } | undefined;
  if (typeof server?.url !== "string") return undefined;
  return server.url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const value = server.variables?.[name]?.default;
    return typeof value === "string" ? value : whole;
  });
}

function invalid(message: string): ItxError {
  return new ItxError("INVALID_ARGUMENT", message);
}
