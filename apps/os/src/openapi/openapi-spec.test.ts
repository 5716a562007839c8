import { describe, expect, test } from "vitest";
import { errorCode } from "iterate/errors";
import { buildRequest } from "./openapi-client-rpc-target.ts";
import { parseSpec, type Operation, type ParsedSpec } from "./openapi-spec.ts";
import { LIMITS } from "../limits.ts";

const PETS = {
  openapi: "3.1.0",
  info: { title: "Pets", version: "2" },
  servers: [{ url: "https://{region}.pets.test/v1", variables: { region: { default: "eu" } } }],
  components: {
    schemas: { Pet: { type: "object", properties: { name: { type: "string" }, parent: { $ref: "#/components/schemas/Pet" } } } },
    parameters: { Id: { name: "id", in: "path", required: true, schema: { type: "integer" } } },
  },
  paths: {
    "/pets/{id}": {
      parameters: [{ $ref: "#/components/parameters/Id" }],
      get: { operationId: "getPet", parameters: [{ name: "fields", in: "query", schema: { type: "array" } }] },
      put: { operationId: "putPet", requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/Pet" } } } } },
      delete: { summary: "no operationId: not callable" },
    },
  },
};

const paths = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`/p${index}`, { get: { operationId: `op${index}` } }]));

function operation(spec: ParsedSpec, id: string): Operation {
  const found = spec.operations.get(id);
  if (!found) throw new Error(`no operation ${id}`);
  return found;
}

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return "resolved";
  } catch (error) {
    return errorCode(error);
  }
}

describe("OpenAPI documents", () => {
  test("operations by operationId, with references resolved and a cycle cut", async () => {
    const spec = await parseSpec(PETS);
    expect(spec).toMatchObject({ title: "Pets", version: "2", serverUrl: "https://eu.pets.test/v1" });
    expect([...spec.operations.keys()]).toEqual(["getPet", "putPet"]);
    const put = spec.operations.get("putPet");
    expect(put?.parameters).toEqual([{ name: "id", in: "path", required: true, schema: { type: "integer" } }]);
    expect(put?.requestBody).toMatchObject({ required: true, contentType: "application/json", schema: { type: "object" } });
    // The recursive schema is served as a tree that ends where it would repeat.
    expect(JSON.stringify(put?.requestBody?.schema)).toContain("#circular");
  });

  test("YAML reads like JSON", async () => {
    const yaml = `openapi: 3.0.3\ninfo: { title: Y, version: "1" }\npaths:\n  /a:\n    get:\n      operationId: getA\n`;
    expect([...(await parseSpec(yaml)).operations.keys()]).toEqual(["getA"]);
  });

  test("bad documents are INVALID_ARGUMENT", async () => {
    expect(await code(parseSpec("{not json"))).toBe("INVALID_ARGUMENT");
    expect(await code(parseSpec({ swagger: "2.0", paths: {} }))).toBe("INVALID_ARGUMENT");
    expect(await code(parseSpec([1, 2]))).toBe("INVALID_ARGUMENT");
    expect(await code(parseSpec({ openapi: "3.0.0", paths: { "/a": { get: { operationId: "x" }, post: { operationId: "x" } } } }))).toBe("INVALID_ARGUMENT");
    expect(await code(parseSpec({ openapi: "3.0.0", paths: { "/a": { get: { $ref: "#/nowhere" } } } }))).toBe("INVALID_ARGUMENT");
  });

  test("a $ref with a malformed percent-escape is INVALID_ARGUMENT, not an uncoded URIError", async () => {
    const refused = await parseSpec({ openapi: "3.0.0", paths: { "/a": { $ref: "#/%" } } }).catch((error: unknown) => error as { code?: string; message?: string });
    expect(refused).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("#/%") });
    expect(await code(parseSpec({ openapi: "3.0.0", paths: { "/a": { get: { operationId: "x", responses: { $ref: "#/components/%E0%A4%A" } } } } }))).toBe("INVALID_ARGUMENT");
  });

  test("REMOTE_JSON_MAX_DEPTH: a document nested deeper is refused before parsing", async () => {
    const depth = LIMITS.REMOTE_JSON_MAX_DEPTH + 1;
    expect(await code(parseSpec(`${"[".repeat(depth)}${"]".repeat(depth)}`))).toBe("INVALID_ARGUMENT");
    expect(await code(parseSpec(`${"a:\n".repeat(1)}${"- ".repeat(depth)}x`))).toBe("INVALID_ARGUMENT");
  });

  test("REMOTE_SCHEMA_NODES_MAX: references standing for an exponential tree are refused", async () => {
    // Each level refers to the one below twice: 40 levels stand for 2^40 nodes.
    const schemas: Record<string, unknown> = { s0: { type: "string" } };
    for (let level = 1; level <= 40; level++) schemas[`s${level}`] = { type: "array", prefixItems: [{ $ref: `#/components/schemas/s${level - 1}` }, { $ref: `#/components/schemas/s${level - 1}` }] };
    const bomb = { openapi: "3.1.0", components: { schemas }, paths: { "/a": { post: { operationId: "boom", requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/s40" } } } } } } } };
    expect(await code(parseSpec(bomb))).toBe("LIMIT_EXCEEDED");
    // The same with YAML aliases.
    const lines = ["openapi: 3.0.0", "x0: &a0 [1, 2]"];
    for (let level = 1; level <= 40; level++) lines.push(`x${level}: &a${level} [*a${level - 1}, *a${level - 1}]`);
    lines.push("paths: {}");
    expect(await code(parseSpec(lines.join("\n")))).toBe("LIMIT_EXCEEDED");
  });

  test("OPENAPI_YAML_MAX_CHARS: a YAML document past it is refused before js-yaml reads it; JSON of the same size is read", async () => {
    const head = "openapi: 3.0.3\ninfo: { title: Y, version: '1' }\npaths: {}\nx: ";
    // At the limit: one long scalar (few nodes).
    const within = `${head}${"y".repeat(LIMITS.OPENAPI_YAML_MAX_CHARS - head.length)}`;
    expect(within.length).toBe(LIMITS.OPENAPI_YAML_MAX_CHARS);
    expect((await parseSpec(within)).title).toBe("Y");
    // Past it: the flow list that held the thread, refused by its length before any parse.
    const past = `${head}[${"1,".repeat(LIMITS.OPENAPI_YAML_MAX_CHARS / 2)}1]`;
    expect(past.length).toBeGreaterThan(LIMITS.OPENAPI_YAML_MAX_CHARS);
    const refused = await parseSpec(past).catch((error: unknown) => error as { code?: string; details?: { limit?: string } });
    expect(refused).toMatchObject({ code: "LIMIT_EXCEEDED", details: { limit: "OPENAPI_YAML_MAX_CHARS" } });
    const json = JSON.stringify({ openapi: "3.0.3", info: { title: "J", version: "1" }, paths: {}, x: "y".repeat(LIMITS.OPENAPI_YAML_MAX_CHARS) });
    expect((await parseSpec(json)).title).toBe("J");
  });

  test("OPENAPI_OPERATIONS_MAX: a document may declare at most that many operations", async () => {
    expect((await parseSpec({ openapi: "3.0.0", paths: paths(LIMITS.OPENAPI_OPERATIONS_MAX) })).operations.size).toBe(LIMITS.OPENAPI_OPERATIONS_MAX);
    expect(await code(parseSpec({ openapi: "3.0.0", paths: paths(LIMITS.OPENAPI_OPERATIONS_MAX + 1) }))).toBe("LIMIT_EXCEEDED");
  });
});

describe("building an operation's request", () => {
  test("path, query and header parameters go where the document says; the body is JSON", async () => {
    const spec = await parseSpec(PETS);
    const get = buildRequest("https://x.test/v1", operation(spec, "getPet"), { id: "a/b", fields: ["name", "age"] }, { "x-key": "k" });
    expect(get.url).toBe("https://x.test/v1/pets/a%2Fb?fields=name&fields=age");
    expect(new Headers(get.init.headers).get("x-key")).toBe("k");
    const put = buildRequest("https://x.test/v1", operation(spec, "putPet"), { id: 1, body: { name: "Rex" } }, {});
    expect(put.init).toMatchObject({ method: "PUT", body: '{"name":"Rex"}' });
    expect(new Headers(put.init.headers).get("content-type")).toBe("application/json");
  });

  test("a path parameter that is a dot segment (. or ..) is INVALID_ARGUMENT: it cannot climb out of the operation's path", async () => {
    const spec = await parseSpec(PETS);
    const get = operation(spec, "getPet");
    for (const id of [".", ".."]) {
      expect(await code(Promise.resolve().then(() => buildRequest("https://x.test/v1", get, { id }, {})))).toBe("INVALID_ARGUMENT");
    }
    // Dots inside a value are an ordinary segment.
    expect(buildRequest("https://x.test/v1", get, { id: "..." }, {}).url).toBe("https://x.test/v1/pets/...");
    expect(buildRequest("https://x.test/v1", get, { id: "a..b" }, {}).url).toBe("https://x.test/v1/pets/a..b");
  });

  test("missing, unknown and malformed parameters are INVALID_ARGUMENT", async () => {
    const spec = await parseSpec(PETS);
    const put = operation(spec, "putPet");
    for (const params of [{ body: {} }, { id: 1 }, { id: 1, body: {}, stray: 2 }, { id: { nested: true }, body: {} }]) {
      expect(await code(Promise.resolve().then(() => buildRequest("https://x.test", put, params, {})))).toBe("INVALID_ARGUMENT");
    }
  });
});
