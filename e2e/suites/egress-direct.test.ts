import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { probeRunnerNetwork } from "../../apps/os/scripts/runner-network.ts";
import { test } from "../harness/fixtures.ts";


// A script's placeholder-free fetch leaves from the runner itself when nothing on its context's
// chain shadows `fetch` (decision 0017). These tests hold that road to the pipe's guarantees: a
// shadow provided while the run is under way takes the very next fetch, placeholders still reach
// the pipe (and are substituted there), and redirects are judged hop by hop. Loopback only.

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let base = "";
const seen: Seen[] = [];
// Routes a test adds: called before the answer, which they may hold back (e.g. to act mid-run).
const routes = new Map<string, (response: ServerResponse) => Promise<void> | void>();
let close: () => Promise<void> = async () => undefined;

beforeAll(async () => {
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", async () => {
      seen.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body });
      const route = routes.get(new URL(request.url ?? "/", "http://x").pathname);
      if (route) return void (await route(response));
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ url: request.url, headers: request.headers, body }));
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  close = () => new Promise((closed) => server.close(() => closed()));
});
afterAll(() => close());

const arrived = (path: string) => seen.filter((entry) => entry.url.startsWith(path)).length;
const at = (path: string) => seen.findLast((entry) => entry.url === path) as Seen;

describe("a fetch shadow provided while a script runs", () => {
  test("takes the script's next fetch: the parent gains a shadow while the script's first request is in flight", async ({ project: { itx } }) => {
    const child = itx.extend({ name: "worker" });
    const audit: string[] = [];
    const path = `/first-${crypto.randomUUID()}`;
    routes.set(path, async (response) => {
      // The script is waiting on this answer; the shadow is in place before it gets it.
      await itx.provideCapability({
        name: "fetch",
        capability: async (request: Request) => {
          audit.push(new URL(request.url).pathname);
          return new Response("shadowed", { status: 299 });
        },
      });
      response.writeHead(200);
      response.end("first");
    });
    const out = await child.run(`async () => {
      const first = await fetch(${JSON.stringify(base + path)});
      const second = await fetch(${JSON.stringify(`${base}/second-after-shadow`)});
      return [first.status, await first.text(), second.status, await second.text()];
    }`);
    expect(out).toEqual([200, "first", 299, "shadowed"]);
    expect(audit).toEqual(["/second-after-shadow"]);
    expect(arrived("/second-after-shadow")).toBe(0);
  });

  test("released while the script runs: the next fetch reaches the server again", async ({ project: { itx } }) => {
    const path = `/release-${crypto.randomUUID()}`;
    // The shadow answers once and takes itself away before it answers.
    const interception = await itx.egress.intercept(async () => {
      await interception.release();
      return new Response("shadowed", { status: 299 });
    });
    const out = await itx.run(`async () => {
      const first = await fetch(${JSON.stringify(`${base}${path}/1`)});
      const second = await fetch(${JSON.stringify(`${base}${path}/2`)});
      return [first.status, second.status];
    }`);
    expect(out).toEqual([299, 200]);
    expect([arrived(`${path}/1`), arrived(`${path}/2`)]).toEqual([0, 1]);
  });
});

// A dynamic worker's handle keeps its verdict across calls (KeptVerdict): a shadow provided
// after its first call must take its next fetch all the same, on both kinds of worker.
const fetcherFiles = {
  "index.ts": `import { DurableObject, WorkerEntrypoint } from "cloudflare:workers";
async function get(url: string, init?: RequestInit) { const response = await fetch(url, init); return [response.status, await response.text()]; }
export default class Fetcher extends WorkerEntrypoint { get(url: string, init?: RequestInit) { return get(url, init); } }
export class DurableFetcher extends DurableObject { get(url: string, init?: RequestInit) { return get(url, init); } }`,
};

interface Getter {
  get(url: string, init?: RequestInit): Promise<[number, string]>;
}

describe.each([
  ["a stateless worker", {}],
  ["a durable worker", { durableObject: { className: "DurableFetcher", key: "f" } }],
])("%s's fetches", (_kind, ref) => {
  test("a shadow provided after the handle's first call takes its next fetch; placeholders are still substituted", async ({ project: { itx } }) => {
    const path = `/worker-${crypto.randomUUID()}`;
    const worker = itx.workers.get({ source: { files: fetcherFiles }, ...ref }) as unknown as Getter;
    expect((await worker.get(`${base}${path}/1`))[0]).toBe(200);
    const material = `sk-worker-${crypto.randomUUID()}`;
    await itx.secrets.get("/secrets/token").update({ material, egress: { urls: [`${base}/`] } });
    expect((await worker.get(`${base}${path}/secret`, { headers: { "X-Key": 'getSecret("/secrets/token")' } }))[0]).toBe(200);
    expect(at(`${path}/secret`).headers["x-key"]).toBe(material);
    const audit: string[] = [];
    const interception = await itx.egress.intercept(async (request: Request) => {
      audit.push(new URL(request.url).pathname);
      return new Response("shadowed", { status: 299 });
    });
    expect(await worker.get(`${base}${path}/2`)).toEqual([299, "shadowed"]);
    expect(audit).toEqual([`${path}/2`]);
    await interception.release();
    expect((await worker.get(`${base}${path}/3`))[0]).toBe(200);
    expect([arrived(`${path}/1`), arrived(`${path}/2`), arrived(`${path}/3`)]).toEqual([1, 0, 1]);
  });
});

// Locally, itx.fetch keeps a context's shadow-free answer until a provide raises the floor
// (knownShadowFree): a shadow provided after fetches that found none must take the next one.
describe("itx.fetch after its context was found shadow-free", () => {
  test("a shadow provided on the context, or on a parent, takes the next fetch; released, the server is reached again", async ({ project: { itx } }) => {
    const path = `/kept-${crypto.randomUUID()}`;
    const child = itx.extend({ name: "fetcher" });
    expect((await itx.fetch(`${base}${path}/1`)).status).toBe(200);
    expect((await child.fetch(`${base}${path}/c1`)).status).toBe(200);
    expect((await itx.fetch(`${base}${path}/2`)).status).toBe(200);
    expect((await child.fetch(`${base}${path}/c2`)).status).toBe(200);
    const interception = await itx.egress.intercept(async () => new Response("shadowed", { status: 299 }));
    expect((await itx.fetch(`${base}${path}/3`)).status).toBe(299);
    expect((await child.fetch(`${base}${path}/c3`)).status).toBe(299);
    await interception.release();
    expect((await itx.fetch(`${base}${path}/4`)).status).toBe(200);
    expect((await child.fetch(`${base}${path}/c4`)).status).toBe(200);
    const counts = ["1", "2", "3", "4", "c1", "c2", "c3", "c4"].map((step) => arrived(`${path}/${step}`));
    expect(counts).toEqual([1, 1, 0, 1, 1, 1, 0, 1]);
  });
});

describe("placeholders always take the pipe", () => {
  test("in a context with no shadow, a header's placeholder is substituted; one in a body leaves as written, on either road", async ({ project: { itx } }) => {
    const material = `sk-direct-${crypto.randomUUID()}`;
    await itx.secrets.get("/secrets/token").update({ material, egress: { urls: [`${base}/`] } });
    const out = await itx.run(`async () => {
      const send = async (path, init) => (await fetch(${JSON.stringify(base)} + path, init)).status;
      return [
        await send("/p/header", { headers: { "X-Key": 'getSecret("/secrets/token")' } }),
        await send("/p/form", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: 'k=getSecret("/secrets/token")' }),
        await send("/p/text", { method: "POST", body: "getSecret('/secrets/token')" }),
        await send("/p/json", { method: "POST", headers: { "content-type": "application/json", "x-key": 'getSecret("/secrets/token")' }, body: JSON.stringify({ k: 'getSecret("/secrets/token")' }) }),
      ];
    }`);
    expect(out).toEqual([200, 200, 200, 200]);
    expect(at("/p/header").headers["x-key"]).toBe(material);
    expect(at("/p/form").body).toBe('k=getSecret("/secrets/token")');
    expect(at("/p/text").body).toBe("getSecret('/secrets/token')");
    // Through the pipe (its header names a secret), the body still leaves as written.
    expect(at("/p/json").headers["x-key"]).toBe(material);
    expect(JSON.parse(at("/p/json").body)).toEqual({ k: 'getSecret("/secrets/token")' });
    expect((await itx.secrets.get("/secrets/token").__describe()).uses).toBe(2);
  });
});

describe("redirects", () => {
  test("each hop is judged again: a redirect to a refused address is refused and nothing arrives there", async ({ project: { itx } }) => {
    // A server on 127.0.0.2, which the loopback policy refuses: were the guard skipped, it would
    // receive the request (and the traffic still stays on this machine).
    const landed: string[] = [];
    const other = createServer((request, response) => {
      landed.push(request.url ?? "");
      response.end("landed");
    });
    await new Promise<void>((listening) => other.listen(0, "127.0.0.2", listening));
    const address = other.address();
    const refusedUrl = `http://127.0.0.2:${typeof address === "object" && address ? address.port : 0}/landed`;
    try {
      const path = `/hop-${crypto.randomUUID()}`;
      routes.set(path, (response) => {
        response.writeHead(302, { location: refusedUrl });
        response.end();
      });
      routes.set(`${path}-ok`, (response) => {
        response.writeHead(302, { location: `${base}${path}-landed` });
        response.end();
      });
      // What the script returns: the manual hop's status and location, the followed outcome, the good hop's status and body.
      const out = (await itx.run(`async () => {
        const manual = await fetch(${JSON.stringify(base + path)}, { redirect: "manual" });
        let followed;
        try { followed = (await fetch(${JSON.stringify(base + path)})).status; } catch (error) { followed = String(error.message).includes("EGRESS_REFUSED") ? "refused" : String(error.message); }
        const ok = await fetch(${JSON.stringify(`${base}${path}-ok`)});
        return [manual.status, manual.headers.get("location"), followed, ok.status, await ok.text()];
      }`)) as [number, string | null, number | string, number, string];
      expect(out.slice(0, 4)).toEqual([302, refusedUrl, "refused", 200]);
      expect(JSON.parse(out[4]).url).toBe(`${path}-landed`);
      expect(landed).toEqual([]);
    } finally {
      await new Promise((closed) => other.close(closed));
    }
  });
});

describe("the runner's network filter judges the resolved address", () => {
  test("a name that resolves to loopback is refused unless the policy allows loopback; nothing arrives", async () => {
    const port = new URL(base).port;
    // `localhost` resolves to 127.0.0.1 (or ::1) everywhere: the URL check is not asked here, only
    // the network service the runner's direct road sends through, built exactly as the runner's.
    const urls = [`http://localhost:${port}/by-name-${crypto.randomUUID()}`, `http://127.0.0.1:${port}/by-address-${crypto.randomUUID()}`];
    const before = seen.length;
    const refused = await probeRunnerNetwork("", urls);
    expect(refused.every((outcome) => outcome.startsWith("failed")), refused.join("; ")).toBe(true);
    expect(seen.length).toBe(before);
    const allowed = await probeRunnerNetwork("loopback", urls);
    expect(allowed).toEqual(["sent 200", "sent 200"]);
    expect(seen.length).toBe(before + 2);
  });
});
