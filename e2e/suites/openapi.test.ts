import { afterAll, beforeAll, describe, expect } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import type { OpenApiClient, OpenApiOperation, OpenApiResult } from "iterate/types";
import { mounted, test } from "../harness/fixtures.ts";
import { PETS_SPEC, startOpenApiServer, type OpenApiTestServer } from "../harness/openapi-server.ts";

/** An operation by operationId: the client cannot know a document's operations. */
type Operation = (input: Record<string, unknown>) => OpenApiResult;
/** The operations of PETS_SPEC (and one it lacks). */
type Pets = OpenApiClient & { listPets: Operation; createPet: Operation; getPet: Operation; deletePet: Operation };

const MATERIAL = `api-key-${crypto.randomUUID()}`;
let api: OpenApiTestServer;

beforeAll(async () => {
  api = await startOpenApiServer();
});
afterAll(async () => {
  await api.close();
});

describe("itx.openapi.connect: a client on an HTTP API described by OpenAPI", () => {
  test("reads the document from a URL and calls operations by operationId", async ({ project: { itx } }) => {
    using pets = mounted<Pets>(await itx.openapi.connect({ url: `${api.url}/openapi.json` }));
    const description = await pets.__describe();
    expect(description).toMatchObject({ kind: "openapi-client", baseUrl: `${api.url}/v1`, title: "Pets", version: "1.2.3" });
    expect(description.operations.map((operation: OpenApiOperation) => operation.operationId)).toEqual(["listPets", "createPet", "getPet"]);
    const getPet = description.operations.find((operation: OpenApiOperation) => operation.operationId === "getPet");
    expect(getPet).toMatchObject({ method: "GET", path: "/pets/{petId}" });
    expect(getPet?.parameters).toEqual(
      expect.arrayContaining([{ name: "petId", in: "path", required: true, schema: { type: "integer" } }, expect.objectContaining({ name: "x-trace", in: "header" })]),
    );
    const createPet = description.operations.find((operation: OpenApiOperation) => operation.operationId === "createPet");
    expect(createPet?.requestBody?.schema).toMatchObject({ type: "object", required: ["name"] });

    expect(await pets.getPet({ petId: 1, "x-trace": "t1" })).toEqual({ status: 200, contentType: "application/json", body: { id: 1, name: "Rex", trace: "t1" } });
    expect(await pets.createPet({ body: { name: "Tom" } })).toMatchObject({ status: 201, body: { id: 2, name: "Tom" } });
    expect((await pets.listPets({ limit: 1 })).body).toEqual([{ id: 1, name: "Rex" }]);
    expect(api.received.at(-1)?.url).toBe("/v1/pets?limit=1");
    // Any status is a result.
    expect(await pets.getPet({ petId: 99 })).toMatchObject({ status: 404, body: { message: "no such pet" } });
    await expectCode(pets.deletePet({ petId: 1 }), "NOT_FOUND");
    await expectCode(pets.getPet({}), "INVALID_ARGUMENT");
    await expectCode(pets.getPet({ petId: 1, stray: true }), "INVALID_ARGUMENT");
    await expectCode(pets.createPet({}), "INVALID_ARGUMENT");
  });

  test("takes the document inline (object or YAML text) with a baseUrl", async ({ project: { itx } }) => {
    using fromObject = mounted<Pets>(await itx.openapi.connect({ spec: PETS_SPEC, baseUrl: `${api.url}/v1` }));
    expect((await fromObject.getPet({ petId: 1 })).body).toMatchObject({ name: "Rex" });
    const yaml = ["openapi: 3.0.0", "info: { title: Y, version: '1' }", "paths:", "  /pets/{id}:", "    get:", "      operationId: pet", "      parameters: [{ name: id, in: path, required: true }]"].join("\n");
    using fromYaml = mounted<{ pet: Operation }>(await itx.openapi.connect({ spec: yaml, baseUrl: `${api.url}/v1` }));
    expect((await fromYaml.pet({ id: 1 })).body).toMatchObject({ name: "Rex" });
    // A relative server needs a document URL or a baseUrl.
    await expectCode(itx.openapi.connect({ spec: PETS_SPEC }), "INVALID_ARGUMENT");
    for (const input of [{}, { url: `${api.url}/openapi.json`, spec: PETS_SPEC }, { spec: "{broken" }, { spec: { swagger: "2.0" } }, { spec: PETS_SPEC, baseUrl: "ftp://x" }, { spec: PETS_SPEC, nope: 1 }]) {
      await expectCode(itx.openapi.connect(input), "INVALID_ARGUMENT");
    }
  });

  test("headers carry placeholders substituted in egress; the guard refuses private servers unsent", async ({ project: { itx } }) => {
    await itx.secrets.get("/secrets/pets").update({ material: MATERIAL, egress: { urls: [`${api.url}/`] } });
    using pets = mounted<Pets>(await itx.openapi.connect({ url: `${api.url}/openapi.json`, headers: { "x-api-key": 'getSecret("/secrets/pets")' } }));
    await pets.getPet({ petId: 1 });
    expect(api.received.at(-2)?.headers["x-api-key"]).toBe(MATERIAL); // the document's request
    expect(api.received.at(-1)?.headers["x-api-key"]).toBe(MATERIAL);

    const before = api.received.length;
    await expectCode(itx.openapi.connect({ url: "http://192.168.1.10/openapi.json" }), "EGRESS_REFUSED");
    // A document may name any server: the guard judges each call's destination.
    using inner = mounted<Pets>(await itx.openapi.connect({ spec: { ...PETS_SPEC, servers: [{ url: "http://10.1.2.3/v1" }] } }));
    await expectCode(inner.getPet({ petId: 1 }), "EGRESS_REFUSED");
    expect(api.received.length).toBe(before);
  });
});
