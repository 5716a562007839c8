import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import worker from "../worker.ts";
import { LOCAL_ADMIN_SECRET, publicSecretRefusal } from "./public-secret-guard.ts";

/** Why an OS with the public secret refuses this request (undefined: it does not). */
function refused(init: { url?: string; method?: string; headers?: Record<string, string> } = {}): string | undefined {
  return publicSecretRefusal(new Request(init.url ?? "http://127.0.0.1:8787/api", { method: init.method ?? "GET", headers: init.headers }), LOCAL_ADMIN_SECRET);
}

describe("an OS with the public local admin secret answers only this machine's own clients", () => {

  test("Node clients, the CLI and pages of this machine pass; other sites' pages and rebound names do not", () => {
    expect(refused()).toBeUndefined();
    expect(refused({ url: "http://localhost:8787/api" })).toBeUndefined();
    expect(refused({ url: "http://[::1]:8787/api" })).toBeUndefined();
    expect(refused({ method: "POST", headers: { origin: "http://127.0.0.1:8787", "sec-fetch-site": "same-origin" } })).toBeUndefined();
    // A page served from this machine (a dev server on another port) is this machine's client.
    expect(refused({ headers: { origin: "http://localhost:5173", upgrade: "websocket" } })).toBeUndefined();
    expect(refused({ method: "POST", url: "http://hello.localhost:8787/" })).toBeUndefined();
    // A WebSocket or a post (a fetch, a form) from any site the developer visits.
    expect(refused({ headers: { origin: "https://evil.example", upgrade: "websocket" } })).toMatch(/a page of/);
    expect(refused({ method: "POST", headers: { origin: "https://evil.example" } })).toMatch(/a page of/);
    expect(refused({ method: "POST", headers: { origin: "https://127.0.0.1.evil.example" } })).toMatch(/a page of/);
    // An opaque origin (a sandboxed frame any site can make) is nobody's.
    expect(refused({ method: "POST", headers: { origin: "null" } })).toMatch(/a page of/);
    // DNS rebinding: the page is same-origin with what it reaches, but the name is the site's own.
    expect(refused({ method: "POST", headers: { host: "rebound.evil.example:8787", origin: "http://rebound.evil.example:8787" } })).toMatch(/not this machine's/);
    expect(refused({ headers: { host: "192.168.1.20:8787", authorization: "Bearer x" } })).toMatch(/not this machine's/);
    // What carries no credentials is not held to it: preflights, the dashboard's files, links.
    expect(refused({ method: "OPTIONS", headers: { origin: "https://evil.example" } })).toBeUndefined();
    expect(refused({ url: "http://127.0.0.1:8787/repl-sandbox", headers: { origin: "null", "sec-fetch-site": "cross-site" } })).toBeUndefined();
    expect(refused({ headers: { origin: "https://evil.example", authorization: "Bearer x" } })).toMatch(/a page of/);
    // Another secret: the rule is off (a deployment, or a local OS with ITERATE_ADMIN_SECRET set).
    expect(publicSecretRefusal(new Request("https://os.example.com/api", { method: "POST", headers: { origin: "https://app.example" } }), "something-else")).toBeUndefined();
  });

  test("the Worker refuses such a request on its routes with PERMISSION_DENIED, before any credential is looked at, and still answers /health", async () => {
    const local = { ...env, ITERATE_ADMIN_SECRET: LOCAL_ADMIN_SECRET } as Env;
    const ctx = { waitUntil: () => undefined, passThroughOnException: () => undefined } as unknown as ExecutionContext;
    const batch = JSON.stringify(["push", ["pipeline", 0, ["authenticate"], [{ type: "admin-secret", secret: LOCAL_ADMIN_SECRET }]]]);
    const cross = await worker.fetch(new Request("http://127.0.0.1:8787/api", { method: "POST", body: batch, headers: { origin: "https://evil.example" } }), local, ctx);
    expect(cross.status).toBe(403);
    expect(await cross.json()).toMatchObject({ code: "PERMISSION_DENIED" });
    const streams = await worker.fetch(new Request("http://127.0.0.1:8787/streams/x/y", { headers: { origin: "https://evil.example", authorization: "Bearer x" } }), local, ctx);
    expect(streams.status).toBe(403);
    const health = await worker.fetch(new Request("http://127.0.0.1:8787/health", { headers: { origin: "https://evil.example" } }), local, ctx);
    expect(health.status).toBe(200);
    // The same request to an OS with its own secret reaches /api (and is answered there).
    const own = await worker.fetch(new Request("http://127.0.0.1:8787/api", { method: "POST", body: batch, headers: { origin: "https://evil.example" } }), env, ctx);
    expect(own.status).not.toBe(403);
  });
});
