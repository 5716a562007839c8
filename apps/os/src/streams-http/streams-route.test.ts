import { exports } from "cloudflare:workers";
import { newHttpBatchRpcSession } from "capnweb";
import { describe, expect, test } from "vitest";
import type { UnauthenticatedRoot } from "iterate/types";
import { LIMITS } from "../limits.ts";
import { LIVE_REQUESTS } from "./live-requests.ts";

// The /streams route as a caller meets it: the Worker's own fetch handler, real Durable Objects.
const ORIGIN = "http://os.test";

/** A fresh project and a bearer token that may reach it. */
async function projectWithToken(prefix: string): Promise<{ slug: string; token: string }> {
  const slug = `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  await adminBatch().projects.create({ slug }).whoami();
  const { token } = await adminBatch().tokens.issue({ principal: `${prefix}-caller`, projectIds: [slug], ttlSeconds: 600 });
  return { slug, token };
}

// One HTTP batch acting as admin (a batch ends with its first awaited answer).
function adminBatch() {
  const root = newHttpBatchRpcSession<UnauthenticatedRoot>(new Request(`${ORIGIN}/api`, { fetcher: exports.default } as RequestInit));
  return root.authenticate({ type: "admin-secret", secret: "workerd-test-secret" });
}

/** Creates the project's /live stream and starts a long-poll on it. */
async function longPoll({ slug, token }: { slug: string; token: string }): Promise<Response> {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  expect((await exports.default.fetch(`${ORIGIN}/streams/${slug}/live`, { method: "PUT", headers })).status).toBe(201);
  return exports.default.fetch(`${ORIGIN}/streams/${slug}/live?offset=-1&live=long-poll`, { headers });
}

describe("/streams answers callers who are not allowed, or send nonsense, like a missing stream", () => {
  test("a project segment that is not valid percent-encoding is 401 without a token and the missing stream's 404 with one, never a 500", async () => {
    const { slug, token } = await projectWithToken("route-encoding");
    const auth = { authorization: `Bearer ${token}` };
    const missing = await exports.default.fetch(`${ORIGIN}/streams/${slug}-missing/x`, { headers: auth });
    const expected = [missing.status, await missing.text()];
    expect(expected).toEqual([404, "Stream not found"]);
    for (const segment of ["%E0%A4%A", "%ZZ", "%", "a%C0%AFb"]) {
      for (const method of ["GET", "PUT", "POST", "HEAD", "DELETE"]) {
        const anonymous = await exports.default.fetch(`${ORIGIN}/streams/${segment}/x`, { method });
        expect(anonymous.status, `${method} ${segment} without a token`).toBe(401);
        await anonymous.body?.cancel();
        const init = { method, headers: { ...auth, "content-type": "application/json" }, ...(method === "POST" ? { body: "1" } : {}) };
        const known = await exports.default.fetch(`${ORIGIN}/streams/${segment}/x`, init);
        expect([known.status, method === "HEAD" ? expected[1] : await known.text()], `${method} ${segment} with a token`).toEqual(expected);
      }
    }
  });

  test("a long-poll holds one of the isolate's live slots (STREAMS_HTTP_LIVE_REQUESTS_MAX) while it waits and gives it back when answered", async () => {
    const { slug, token } = await projectWithToken("route-live");
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const url = `${ORIGIN}/streams/${slug}/live`;
    expect((await exports.default.fetch(url, { method: "PUT", headers })).status).toBe(201);
    const before = LIVE_REQUESTS.open;
    const waiting = exports.default.fetch(`${url}?offset=-1&live=long-poll`, { headers });
    await expect.poll(() => LIVE_REQUESTS.open, { timeout: 5_000 }).toBe(before + 1);
    expect((await exports.default.fetch(url, { method: "POST", headers, body: "[1]" })).status).toBe(204);
    const answered = await waiting;
    expect(answered.status).toBe(200);
    await answered.body?.cancel();
    expect(LIVE_REQUESTS.open).toBe(before);
    // An SSE read of a missing stream is a 404 that holds nothing.
    const missing = await exports.default.fetch(`${ORIGIN}/streams/${slug}/absent?offset=-1&live=sse`, { headers });
    expect(missing.status).toBe(404);
    await missing.body?.cancel();
    expect(LIVE_REQUESTS.open).toBe(before);
  });

  test("STREAMS_HTTP_LIVE_REQUESTS_PER_CALLER_MAX: a caller holding its share of live reads gets 503 for one more; another project's caller is unaffected", async () => {
    const mallory = await projectWithToken("route-greedy");
    const alice = await projectWithToken("route-bystander");
    // Mallory's principal already holds its share (as if its long-polls were spread over many streams).
    const held = LIMITS.STREAMS_HTTP_LIVE_REQUESTS_PER_CALLER_MAX;
    for (let i = 0; i < held; i++) expect(LIVE_REQUESTS.enter("route-greedy-caller")).toBe(true);
    try {
      const refused = await longPoll(mallory);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(await refused.text()).toContain("STREAMS_HTTP_LIVE_REQUESTS_PER_CALLER_MAX");
      const before = LIVE_REQUESTS.open;
      const waiting = longPoll(alice);
      await expect.poll(() => LIVE_REQUESTS.open, { timeout: 5_000 }).toBe(before + 1);
      const headers = { authorization: `Bearer ${alice.token}`, "content-type": "application/json" };
      expect((await exports.default.fetch(`${ORIGIN}/streams/${alice.slug}/live`, { method: "POST", headers, body: "[1]" })).status).toBe(204);
      const answered = await waiting;
      expect(answered.status).toBe(200);
      await answered.body?.cancel();
    } finally {
      for (let i = 0; i < held; i++) LIVE_REQUESTS.leave("route-greedy-caller");
    }
    expect(LIVE_REQUESTS.open).toBe(0);
  });
});

describe("STREAMS_HTTP_SSE_MAX_MS: an SSE response ends at its deadline", () => {
  test("a client that opens an SSE response and never reads it is cut off at STREAMS_HTTP_SSE_MAX_MS, and its live slot is given back", async () => {
    const { slug, token } = await projectWithToken("route-sse-stuck");
    const headers = { authorization: `Bearer ${token}`, "content-type": "text/plain" };
    const url = `${ORIGIN}/streams/${slug}/flood`;
    expect((await exports.default.fetch(url, { method: "PUT", headers })).status).toBe(201);
    const limits = LIMITS as Record<string, number>;
    const saved = { ...limits };
    Object.assign(limits, { STREAMS_HTTP_SSE_MAX_MS: 300 });
    let response: Response | undefined;
    try {
      const before = LIVE_REQUESTS.open;
      // Opened, and its body never read: the pump's writes back up behind it.
      response = await exports.default.fetch(`${url}?offset=-1&live=sse`, { headers });
      expect(response.status).toBe(200);
      expect(LIVE_REQUESTS.open).toBe(before + 1);
      // 4 MiB for it, more than the response takes unread: a write of it waits past the deadline.
      const payload = "x".repeat(LIMITS.STREAMS_HTTP_BODY_MAX_BYTES);
      for (let i = 0; i < 8; i++) expect((await exports.default.fetch(url, { method: "POST", headers, body: payload })).status).toBe(204);
      // The pump ended anyway, and gave its slot back.
      await expect.poll(() => LIVE_REQUESTS.open, { timeout: 10_000 }).toBe(before);
    } finally {
      Object.assign(limits, saved);
      await response?.body?.cancel().catch(() => undefined);
    }
  });
});

describe("STREAMS_HTTP_SSE_MAX_MS bounds the waits too", () => {
  test("an SSE response on a quiet stream ends at its deadline, not a whole wait for news after it", async () => {
    const { slug, token } = await projectWithToken("route-sse-quiet");
    const headers = { authorization: `Bearer ${token}`, "content-type": "text/plain" };
    const url = `${ORIGIN}/streams/${slug}/quiet`;
    expect((await exports.default.fetch(url, { method: "PUT", headers })).status).toBe(201);
    const limits = LIMITS as Record<string, number>;
    const saved = { ...limits };
    Object.assign(limits, { STREAMS_HTTP_SSE_MAX_MS: 300 });
    try {
      const started = Date.now();
      const response = await exports.default.fetch(`${url}?offset=-1&live=sse`, { headers });
      expect(response.status).toBe(200);
      // Read to the end: the first step answers at once; the wait after it is cut to the deadline.
      expect(await response.text()).toContain("event: control");
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      Object.assign(limits, saved);
    }
  });
});

describe("/streams never serves a page that runs on the OS's origin", () => {
  test("a stream created as text/html is served as written, sandboxed with no script, on every kind of answer", async () => {
    const { slug, token } = await projectWithToken("route-html");
    const auth = { authorization: `Bearer ${token}` };
    const url = `${ORIGIN}/streams/${slug}/page`;
    const page = "<script>fetch('/api', { credentials: 'include' })</script>";
    const answers: Array<[string, Response]> = [];
    answers.push(["PUT", await exports.default.fetch(url, { method: "PUT", headers: { ...auth, "content-type": "text/html", "Stream-Closed": "true" }, body: page })]);
    const read = await exports.default.fetch(`${url}?offset=-1`, { headers: auth });
    expect(read.headers.get("content-type")).toBe("text/html");
    expect(await read.clone().text()).toBe(page);
    answers.push(["GET", read]);
    const etag = read.headers.get("etag") ?? "";
    answers.push(["GET if-none-match", await exports.default.fetch(`${url}?offset=-1`, { headers: { ...auth, "if-none-match": etag } })]);
    answers.push(["HEAD", await exports.default.fetch(url, { method: "HEAD", headers: auth })]);
    answers.push(["SSE", await exports.default.fetch(`${url}?offset=-1&live=sse`, { headers: auth })]);
    answers.push(["missing", await exports.default.fetch(`${url}-missing`, { headers: auth })]);
    answers.push(["anonymous", await exports.default.fetch(url)]);
    answers.push(["OPTIONS", await exports.default.fetch(url, { method: "OPTIONS" })]);
    expect(answers.map(([name, answer]) => [name, answer.status])).toEqual([
      ["PUT", 201],
      ["GET", 200],
      ["GET if-none-match", 304],
      ["HEAD", 200],
      ["SSE", 200],
      ["missing", 404],
      ["anonymous", 401],
      ["OPTIONS", 204],
    ]);
    for (const [name, answer] of answers) {
      expect([name, answer.headers.get("content-security-policy"), answer.headers.get("x-content-type-options")]).toEqual([name, "sandbox; default-src 'none'", "nosniff"]);
      await answer.body?.cancel();
    }
  });
});
