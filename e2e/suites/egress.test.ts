import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, inject } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import type { Secret, StreamEvent } from "iterate/types";
import { startEchoServer } from "../harness/echo-server.ts";
import { listenOnLoopback } from "../harness/loopback-server.ts";
import { test } from "../harness/fixtures.ts";


// A value that must never be seen anywhere but at the echo server.
const MATERIAL = `sk-live-${crypto.randomUUID()}`;
const seenByClient: string[] = [];
let echo: Awaited<ReturnType<typeof startEchoServer>>;

beforeAll(async () => {
  echo = await startEchoServer();
});
afterAll(async () => {
  await echo.close();
});

describe("secrets and the egress pipe", () => {
  test("a placeholder is substituted only in the terminal step, for an allowed URL; the answer is scrubbed", async ({ project: { itx } }) => {
    await itx.secrets.get("/secrets/token").update({ material: MATERIAL, egress: { urls: [`${echo.url}/api/`] } });
    const description = await itx.secrets.get("/secrets/token").__describe();
    seenByClient.push(JSON.stringify(description));
    expect(description).toMatchObject({ path: "/secrets/token", set: true, version: 1, uses: 0, egress: { urls: [`${echo.url}/api/`] } });

    const answer = await itx.run(`async () => {
      const response = await fetch("${echo.url}/api/me", { method: "POST", headers: { authorization: 'Bearer getSecret("/secrets/token")', "content-type": "application/json" }, body: JSON.stringify({ key: 'getSecret("/secrets/token")' }) });
      return await response.text();
    }`);
    seenByClient.push(String(answer));
    const atServer = echo.received.at(-1);
    expect(atServer?.headers.authorization).toBe(`Bearer ${MATERIAL}`);
    // Headers only: the body leaves as written.
    expect(JSON.parse(atServer?.body ?? "{}")).toEqual({ key: 'getSecret("/secrets/token")' });
    expect(answer).not.toContain(MATERIAL);
    expect(answer).toContain("Bearer [secret]");

    expect((await itx.secrets.get("/secrets/token").__describe()).uses).toBe(1);
    const used = await itx.streams.get("/secrets/token").getEvents({});
    seenByClient.push(JSON.stringify(used));
    expect(used.map((event: StreamEvent) => event.type)).toEqual(["events.iterate.com/secret/set", "events.iterate.com/secret/used"]);
  });

  test("material never reaches a body, so a destination that keeps bodies cannot hand it back to a later request", async ({ project: { itx } }) => {
    // A store on the allowlist: PUT keeps the body, GET answers it (a gist, a message, a document).
    let kept = "";
    const store = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        if (request.method === "PUT") kept = body;
        response.writeHead(200, { "content-type": "text/plain" });
        response.end(request.method === "GET" ? kept : "kept");
      });
    });
    const { origin, close } = await listenOnLoopback(store);
    try {
      await itx.secrets.get("/secrets/stored").update({ material: MATERIAL, egress: { urls: [`${origin}/`] } });
      const readBack = await itx.run(`async () => {
        const put = await fetch("${origin}/doc", { method: "PUT", headers: { authorization: 'Bearer getSecret("/secrets/stored")', "content-type": "application/json" }, body: JSON.stringify({ note: 'getSecret("/secrets/stored")' }) });
        await put.text();
        return await (await fetch("${origin}/doc")).text();
      }`);
      seenByClient.push(String(readBack));
      expect(JSON.parse(String(readBack))).toEqual({ note: 'getSecret("/secrets/stored")' });
      expect(kept).not.toContain(MATERIAL);
      // The header was filled in: the secret was spent once, for the PUT.
      expect((await itx.secrets.get("/secrets/stored").__describe()).uses).toBe(1);
    } finally {
      await close();
    }
  });

  test("a URL outside the allowlist is refused and nothing is sent", async ({ project: { itx } }) => {
    await itx.secrets.get("/secrets/other").update({ material: MATERIAL, egress: { urls: ["https://api.example.com/"] } });
    const before = echo.received.length;
    const error = await expectCode(itx.fetch(`${echo.url}/steal`, { headers: { "x-key": 'getSecret("/secrets/other")' } }), "EGRESS_REFUSED");
    seenByClient.push(error.message);
    expect(echo.received.length).toBe(before);
    await expectCode(itx.fetch(`${echo.url}/x`, { headers: { "x-key": 'getSecret("/secrets/never-set")' } }), "EGRESS_REFUSED");
    expect(echo.received.length).toBe(before);
  });

  test("bad secret input is INVALID_ARGUMENT", async ({ project: { itx } }) => {
    for (const [path, input] of [
      ["/secrets/a", { material: "", egress: { urls: ["https://x.test/"] } }],
      ["/secrets/a", { material: "x".repeat(16_385), egress: { urls: ["https://x.test/"] } }],
      ["/secrets/a", { material: "x", egress: { urls: [] } }],
      ["/secrets/a", { material: "x", egress: { urls: ["ftp://x.test/"] } }],
      ["/secrets/a", { material: "x", egress: { urls: ["https://x.test/"] }, extra: 1 }],
      // Material travels in a header value: printable ASCII only (a CR LF would start a header).
      ["/secrets/a", { material: "x\r\nx-injected: 1", egress: { urls: ["https://x.test/"] } }],
      ["/secrets/a", { material: "sk-é€😀", egress: { urls: ["https://x.test/"] } }],
    ] as Array<[string, unknown]>) {
      // Deliberately bad input: the contract's type would refuse some of it at compile time.
      await expectCode(itx.secrets.get(path).update(input as Parameters<Secret["update"]>[0]), "INVALID_ARGUMENT");
    }
    await expectCode(itx.secrets.get("/not-secrets/a").__describe(), "INVALID_ARGUMENT");
  });

  test("an interceptor sees placeholders, never material; release restores the pipe", async ({ project: { itx } }) => {
    await itx.secrets.get("/secrets/token").update({ material: MATERIAL, egress: { urls: [`${echo.url}/`] } });
    const seen: string[] = [];
    const interception = await itx.egress.intercept(async (request: Request) => {
      seen.push(request.headers.get("authorization") ?? "");
      return new Response("intercepted", { status: 299 });
    });
    const intercepted = await itx.run(`async () => { const r = await fetch("${echo.url}/a", { headers: { authorization: 'getSecret("/secrets/token")' } }); return [r.status, await r.text()]; }`);
    expect(intercepted).toEqual([299, "intercepted"]);
    expect(seen).toEqual(['getSecret("/secrets/token")']);
    await interception.release();
    const direct = await itx.egress.fetch(`${echo.url}/b`);
    expect(direct.status).toBe(200);
  });

  test("the private-address guard refuses private destinations from scripts and handles", async ({ project: { itx } }) => {
    const refused = [
      "http://10.0.0.1/", "http://172.16.0.1/", "http://192.168.0.1/", "http://169.254.169.254/latest/meta-data/",
      "http://100.64.0.1/", "http://127.0.0.2/", "http://0.0.0.0/", "http://[fd00::1]/", "http://[fe80::1]/",
      "http://[::ffff:10.0.0.1]/", "http://192.0.2.1/", "http://198.51.100.1/", "http://203.0.113.1/", "http://224.0.0.1/",
      "http://printer.local/", "http://api.internal/", "http://nas.home.arpa/", "http://intranet/", "http://0x0a000001/",
      "http://2886729729/", "http://[2001:db8::1]/",
    ];
    for (const url of refused) await expectCode(itx.fetch(url), "EGRESS_REFUSED", url);
    const fromScript = await itx.run(`async () => {
      const codes = [];
      for (const url of ${JSON.stringify(refused.slice(0, 5))}) {
        try { await fetch(url); codes.push("sent"); } catch (error) { codes.push(String(error.message).includes("EGRESS_REFUSED") ? "refused" : String(error.message)); }
      }
      return codes;
    }`);
    expect(fromScript).toEqual(["refused", "refused", "refused", "refused", "refused"]);
    expect((await itx.fetch(`${echo.url}/loopback-allowed-here`)).status).toBe(200);
  });

  test("loopback is open only by its canonical spellings: other spellings of the echo server are refused and nothing arrives", async ({ project: { itx } }) => {
    const port = new URL(echo.url).port;
    const before = echo.received.length;
    const spellings = [
      `http://localhost..:${port}/`, `http://localhost.:${port}/`, `http://vm..:${port}/`, `http://vm.:${port}/`,
      `http://[::ffff:0:7f00:1]:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, `http://[::ffff:0:127.0.0.1]:${port}/`,
      `http://[::127.0.0.1]:${port}/`, `http://[64:ff9b::127.0.0.1]:${port}/`, `http://127.0.0.2:${port}/`,
      `http://api.localhost:${port}/`, `http://localhost.localdomain:${port}/`,
    ];
    for (const url of spellings) await expectCode(itx.fetch(url), "EGRESS_REFUSED", url);
    const fromScript = await itx.run(`async () => {
      const codes = [];
      for (const url of ${JSON.stringify(spellings)}) {
        try { await fetch(url); codes.push("sent"); } catch (error) { codes.push(String(error.message).includes("EGRESS_REFUSED") ? "refused" : String(error.message)); }
      }
      return codes;
    }`);
    expect(fromScript).toEqual(spellings.map(() => "refused"));
    expect(echo.received.length).toBe(before);
    expect((await itx.fetch(`http://localhost:${port}/by-name`)).status).toBe(200);
    expect(echo.received.length).toBe(before + 1);
  });

  test("locked test 1, middleware: a bare-function fetch shadow on an extension delegates through super", async ({ project: { itx } }) => {
    const child = itx.extend({ name: "audited" });
    const audit: string[] = [];
    await child.provideCapability({
      name: "fetch",
      capability: async (request: Request) => {
        audit.push(`${request.method} ${request.url}`);
        return child.super.fetch(request);
      },
    });
    const status = await child.run(`async () => (await fetch("${echo.url}/through-middleware")).status`);
    expect(status).toBe(200);
    expect(audit).toEqual([`GET ${echo.url}/through-middleware`]);
    expect(echo.received.at(-1)?.url).toBe("/through-middleware");
  });
});

describe("secret material stays secret", () => {
  test("no event, error, answer or log line contains material", async () => {
    expect(seenByClient.length).toBeGreaterThan(3);
    for (const text of seenByClient) expect(text).not.toContain(MATERIAL);
    // Against a BASE_URL deployment there is no local log to read; the local OS always has one.
    const logPath = inject("logPath");
    const log = logPath ? readFileSync(logPath, "utf8") : "(no local log)";
    expect(log.length).toBeGreaterThan(0);
    expect(log).not.toContain(MATERIAL);
  });
});

/** `n` bytes of a fixed pattern that is not UTF-8 (so nothing may decode and re-encode it). */
function bytes(n: number): Buffer {
  return Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + 7) % 256));
}

describe("a script's fetch carries bodies byte for byte", () => {
  test("small bodies cross between the runner and the OS whole, large and unknown-length ones as streams: both arrive intact", async ({ project: { itx } }) => {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const url = new URL(request.url ?? "/", "http://x");
        const n = Number(url.searchParams.get("n"));
        if (url.pathname === "/sha") {
          response.writeHead(200, { "content-type": "text/plain", "content-length": 64 });
          response.end(createHash("sha256").update(Buffer.concat(chunks)).digest("hex"));
        } else if (url.pathname === "/sized") {
          response.writeHead(200, { "content-type": "application/octet-stream", "content-length": n, "x-kind": "sized" });
          response.end(bytes(n));
        } else {
          // No content-length: chunked, so its size is unknown until its end.
          response.writeHead(200, { "content-type": "application/octet-stream" });
          const body = bytes(n);
          for (let at = 0; at < n; at += 10_000) response.write(body.subarray(at, at + 10_000));
          response.end();
        }
      });
    });
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    const address = server.address();
    const base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    try {
      const script = `async () => {
        const hex = async (buffer) => [...new Uint8Array(await crypto.subtle.digest("SHA-256", buffer))].map((b) => b.toString(16).padStart(2, "0")).join("");
        const out = {};
        for (const [name, path] of [["small", "/sized?n=1000"], ["large", "/sized?n=300000"], ["chunked", "/chunked?n=120000"], ["empty", "/sized?n=0"]]) {
          const response = await fetch(${JSON.stringify(base)} + path);
          out[name] = { status: response.status, kind: response.headers.get("x-kind"), sha: await hex(await response.arrayBuffer()) };
        }
        for (const n of [0, 5000, 200000]) {
          const body = new Uint8Array(n).map((_, i) => (i * 31 + 7) % 256);
          out["post" + n] = await (await fetch(${JSON.stringify(base)} + "/sha", { method: "POST", body })).text();
        }
        return out;
      }`;
      // What the script returns: per name, the answer's status, x-kind and SHA-256; per POST, the server's SHA-256.
      const out = (await itx.run(script)) as Record<string, unknown>;
      const sha = (n: number) => createHash("sha256").update(bytes(n)).digest("hex");
      expect(out.small).toEqual({ status: 200, kind: "sized", sha: sha(1000) });
      expect(out.large).toEqual({ status: 200, kind: "sized", sha: sha(300_000) });
      expect(out.chunked).toEqual({ status: 200, kind: null, sha: sha(120_000) });
      expect(out.empty).toEqual({ status: 200, kind: "sized", sha: sha(0) });
      for (const n of [0, 5000, 200_000]) expect(out[`post${n}`], `POST of ${n} bytes`).toBe(sha(n));
    } finally {
      await new Promise((closed) => server.close(closed));
    }
  });
});
