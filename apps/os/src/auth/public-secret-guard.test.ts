import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import worker from "../worker.ts";
import { LOCAL_ADMIN_SECRET, publicSecretRefusal } from "./public-secret-guard.ts";

/** Why an OS with the public secret refuses this request (undefined: it does not). */
function refused(init: { url?: string; method?: string; headers?: Record<string, string> } = {}): string | undefined {
  return publicSecretRefusal(new Request(init.url ?? "http://127.0.0.1:8787/api", { method: init.method ?? "GET", headers: init.headers }), LOCAL_ADMIN_SECRET);
}

describe("an OS with the public local admin secret answers only this machine's own clients", () => {

  test("Node clients, the CLI and the OS's own pages pass; other sites' pages and rebound names do not", () => {
    expect(refused()).toBeUndefined();
    expect(refused({ url: "http://localhost:8787/api" })).toBeUndefined();
    expect(refused({ url: "http://[::1]:8787/api" })).toBeUndefined();
    expect(refused({ headers: { origin: "http://127.0.0.1:8787", "sec-fetch-site": "same-origin" } })).toBeUndefined();
    expect(refused({ url: "http://hello.localhost:8787/" })).toBeUndefined();
    // A WebSocket or fetch from any site the developer visits.
    expect(refused({ headers: { origin: "https://evil.example" } })).toMatch(/another site/);
    expect(refused({ method: "POST", headers: { "sec-fetch-site": "cross-site" } })).toMatch(/another site/);
    expect(refused({ headers: { origin: "null" } })).toMatch(/another site/);
    // A cross-site form's POST navigation could run an /api batch; a link to the dashboard cannot.
    expect(refused({ method: "POST", headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" } })).toMatch(/another site/);
    expect(refused({ url: "http://127.0.0.1:8787/", headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" } })).toBeUndefined();
    // DNS rebinding: the page is same-origin with what it reaches, but the name is the site's own.
    expect(refused({ headers: { host: "rebound.evil.example:8787", origin: "http://rebound.evil.example:8787" } })).toMatch(/not this machine's/);
    expect(refused({ headers: { host: "192.168.1.20:8787" } })).toMatch(/not this machine's/);
    // Another secret: the rule is off (a deployment, or a local OS with ITERATE_ADMIN_SECRET set).
    expect(publicSecretRefusal(new Request("https://os.example.com/api", { headers: { origin: "https://app.example" } }), "something-else")).toBeUndefined();
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
