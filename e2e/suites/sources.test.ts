import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import type { Itx, SourceCapability } from "iterate/types";
import { startEchoServer } from "../harness/echo-server.ts";
import { mounted, test } from "../harness/fixtures.ts";

/** What the first test's source capability exposes. */
interface Arithmetic {
  math: { add(a: number, b: number): number; where(): string };
}
/** What the indirection test's source capability exposes. */
interface Notifier {
  notifier: { notify(url: string): [number, string] };
}

let echo: Awaited<ReturnType<typeof startEchoServer>>;
beforeAll(async () => {
  echo = await startEchoServer();
});
afterAll(async () => {
  await echo.close();
});

// fetch() will not send a Host header of our choosing; node:http will.
function get(url: string, host: string): Promise<[number, string]> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: { host } }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => resolve([response.statusCode ?? 0, body]));
    });
    request.on("error", reject);
    request.end();
  });
}

const source = (modules: Record<string, string>, extra: Partial<SourceCapability["worker"]["source"]> = {}): SourceCapability => ({
  type: "rpc",
  worker: { type: "source", source: { mainModule: Object.keys(modules)[0] ?? "", modules, ...extra } },
});

describe("durable source capabilities", () => {
  test("dotted calls replay onto the entrypoint's members, and the mount survives its provider", async ({ os, project: { projectId }, connect }) => {
    const provider = connect({ auth: os.admin, projectId });
    await provider.provideCapability({
      name: "math",
      instructions: "itx.math.add(a, b); itx.math.where()",
      capability: source({
        "cap.js": `import { WorkerEntrypoint } from "cloudflare:workers";
export default class extends WorkerEntrypoint {
  add(a, b) { return a + b; }
  async where() { const itx = this.env.ITX.get(); return (await itx.whoami()).path; }
}`,
      }),
    });
    provider[Symbol.dispose]();
    const itx = connect<Arithmetic>({ auth: os.admin, projectId });
    expect(await itx.math.add(2, 3)).toBe(5);
    expect(await itx.math.where()).toBe("/");
    expect(await mounted<Arithmetic>(itx.extend({ name: "kid" })).math.where()).toBe("/itx/kid");
    expect((await itx.__describe()).capabilities).toContainEqual(expect.objectContaining({ path: ["math"], kind: "source", connected: true }));
  });

  test("a durable-object source is a facet with its own SQLite that keeps state", async ({ project: { itx } }) => {
    await itx.provideCapability({
      name: "todo",
      capability: source(
        {
          "todo.js": `import { DurableObject } from "cloudflare:workers";
export class Todo extends DurableObject {
  add(text) {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS items(text TEXT)");
    this.ctx.storage.sql.exec("INSERT INTO items VALUES (?)", text);
    return this.ctx.storage.sql.exec("SELECT count(*) AS n FROM items").one().n;
  }
}`,
        },
        { entrypoint: "Todo", exportType: "durable-object" },
      ),
    });
    const todo = mounted<{ todo: { add(text: string): number } }>(itx).todo;
    expect(await todo.add("a")).toBe(1);
    expect(await todo.add("b")).toBe(2);
  });

  test("bad sources are refused", async ({ project: { itx } }) => {
    for (const capability of [
      { type: "rpc", worker: { type: "binding", binding: "STREAM" } },
      { type: "rpc", worker: { type: "source", source: { mainModule: "a.js", modules: {} } } },
      { type: "rpc", worker: { type: "source", source: { mainModule: "missing.js", modules: { "a.js": "" } } } },
      { type: "rpc", worker: { type: "source", source: { mainModule: "a.js", modules: { "a.js": "x".repeat(131_073) } } } },
    ]) {
      // Deliberately malformed sources: the contract's type would refuse most at compile time.
      await expectCode(itx.provideCapability({ name: "s", capability: capability as SourceCapability }), "INVALID_ARGUMENT");
    }
  });

  test("locked test 2, indirection: an inherited source capability's bare fetch lands in the calling extension's shadow", async ({ os, project: { projectId }, connect }) => {
    const itx = connect<Notifier>({ auth: os.admin, projectId });
    await itx.provideCapability({
      name: "notifier",
      capability: source({
        "n.js": `import { WorkerEntrypoint } from "cloudflare:workers";
export default class extends WorkerEntrypoint {
  async notify(url) { const response = await fetch(url, { method: "POST", body: "ping" }); return [response.status, await response.text()]; }
}`,
      }),
    });
    const shadowed = mounted<Itx & Notifier>(itx.extend({ name: "shadowed" }));
    const sibling = mounted<Notifier>(itx.extend({ name: "sibling" }));
    const caught: string[] = [];
    await shadowed.provideCapability({
      name: "fetch",
      capability: (request: Request) => {
        caught.push(request.url);
        return new Response("caught by the shadow", { status: 222 });
      },
    });
    expect(await shadowed.notifier.notify(`${echo.url}/from-shadowed`)).toEqual([222, "caught by the shadow"]);
    expect(caught).toEqual([`${echo.url}/from-shadowed`]);
    const before = echo.received.length;
    expect((await sibling.notifier.notify(`${echo.url}/from-sibling`))[0]).toBe(200);
    expect((await itx.notifier.notify(`${echo.url}/from-parent`))[0]).toBe(200);
    expect(echo.received.slice(before).map((entry) => entry.url)).toEqual(["/from-sibling", "/from-parent"]);
  });
});

describe("HTTP routing to capabilities", () => {
  test("an exposed capability answers at {capability}--{project}; an unexposed one is 404", async ({ os: { baseUrl }, project: { itx, slug } }) => {
    await itx.provideCapability({
      name: "site",
      http: { expose: true },
      capability: source({
        "site.js": `import { WorkerEntrypoint } from "cloudflare:workers";
export default class extends WorkerEntrypoint { async fetch(request) { return new Response("hello from " + new URL(request.url).pathname); } }`,
      }),
    });
    await itx.provideCapability({ name: "hidden", capability: { fetch: () => new Response("secret") } });
    expect(await get(`${baseUrl}/index.html`, `site--${slug}.localhost`)).toEqual([200, "hello from /index.html"]);
    for (const host of [`hidden--${slug}.localhost`, `nothing--${slug}.localhost`, "site--no-such-project.localhost"]) {
      expect((await get(`${baseUrl}/`, host))[0], host).toBe(404);
    }
    // A deliberately malformed `expose`: the contract's type would refuse it at compile time.
    await expectCode(itx.provideCapability({ name: "x", http: { expose: "yes" as unknown as boolean }, capability: () => 1 }), "INVALID_ARGUMENT");
  });
});
