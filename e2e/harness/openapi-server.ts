import { createServer, type IncomingHttpHeaders } from "node:http";
import { listenOnLoopback } from "./loopback-server.ts";

export interface OpenApiTestServer {
  url: string;
  received: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

/** The document the test service publishes at /openapi.json (its server is relative: "/v1"). */
export const PETS_SPEC = {
  openapi: "3.0.3",
  info: { title: "Pets", version: "1.2.3" },
  servers: [{ url: "/v1" }],
  components: {
    schemas: { Pet: { type: "object", properties: { id: { type: "integer" }, name: { type: "string" } }, required: ["name"] } },
    parameters: { PetId: { name: "petId", in: "path", required: true, schema: { type: "integer" } } },
  },
  paths: {
    "/pets": {
      get: { operationId: "listPets", parameters: [{ name: "limit", in: "query", schema: { type: "integer" } }], responses: { "200": { description: "ok" } } },
      post: {
        operationId: "createPet",
        requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/Pet" } } } },
        responses: { "201": { description: "created" } },
      },
    },
    "/pets/{petId}": {
      parameters: [{ $ref: "#/components/parameters/PetId" }],
      get: { operationId: "getPet", parameters: [{ name: "x-trace", in: "header", schema: { type: "string" } }], responses: { "200": { description: "ok" } } },
    },
  },
};

/** A small pets API on loopback that publishes its OpenAPI document and records every request. */
export async function startOpenApiServer(): Promise<OpenApiTestServer> {
  const received: OpenApiTestServer["received"] = [];
  const pets = [{ id: 1, name: "Rex" }];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    received.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body });
    const url = new URL(request.url ?? "/", "http://localhost");
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    if (url.pathname === "/openapi.json") return json(200, PETS_SPEC);
    if (url.pathname === "/v1/pets" && request.method === "GET") return json(200, pets.slice(0, Number(url.searchParams.get("limit") ?? 100)));
    if (url.pathname === "/v1/pets" && request.method === "POST") {
      const pet = { id: pets.length + 1, ...(JSON.parse(body) as object) };
      pets.push(pet as (typeof pets)[number]);
      return json(201, pet);
    }
    const match = /^\/v1\/pets\/(\d+)$/.exec(url.pathname);
    if (match && request.method === "GET") {
      const pet = pets.find((entry) => entry.id === Number(match[1]));
      return pet ? json(200, { ...pet, trace: request.headers["x-trace"] ?? null }) : json(404, { message: "no such pet" });
    }
    return json(404, { message: "no route" });
  });
  const { origin, close } = await listenOnLoopback(server);
  return {
    url: origin,
    received,
    close,
  };
}
