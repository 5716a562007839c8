import { env, exports } from "cloudflare:workers";
import { newHttpBatchRpcSession, newWebSocketRpcSession } from "capnweb";
import { describe, expect, test } from "vitest";
import type { UnauthenticatedRoot } from "iterate/types";
import { expectCode } from "iterate/stream/test-support";
import { LIMITS } from "../limits.ts";
import { authenticateSessionCookie } from "./cookie-lane.ts";
import { serveBrowserAuth } from "./browser-sign-in.ts";

// oxlint-disable typescript/no-explicit-any -- sessions are dynamic stubs

const ORIGIN = "http://os.test";
const secret = "workerd-test-secret";

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return exports.default.fetch(`${ORIGIN}${path}`, {
    method: "POST",
    // An empty value leaves the header out.
    headers: Object.fromEntries(Object.entries({ origin: ORIGIN, "content-type": "application/json", ...headers }).filter(([, value]) => value !== "")),
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function signIn(credentials: unknown = { type: "admin-secret", secret }): Promise<string> {
  const response = await post("/auth/sign-in", { credentials });
  expect(response.status).toBe(200);
  const line = response.headers.get("set-cookie") ?? "";
  return line.slice(0, line.indexOf(";"));
}

/** A WebSocket session to /api as a browser would open it: the cookie and an Origin header. */
async function openApi(cookie: string, origin: string | undefined = ORIGIN) {
  const headers: Record<string, string> = { upgrade: "websocket", cookie };
  if (origin !== undefined) headers.origin = origin;
  const response = await exports.default.fetch(`${ORIGIN}/api`, { headers });
  const socket = response.webSocket as unknown as WebSocket & { accept(): void };
  socket.accept();
  const closed = new Promise<{ code: number; reason: string }>((done) => socket.addEventListener("close", (event) => done({ code: event.code, reason: event.reason })));
  const root = newWebSocketRpcSession<UnauthenticatedRoot>(socket as never) as any;
  return { root, closed, socket };
}

describe("browser sign-in sets a signed, httpOnly, same-site cookie", () => {
  test("the admin secret signs in; the WebSocket handshake authenticates with the cookie alone", async () => {
    const response = await post("/auth/sign-in", { credentials: { type: "admin-secret", secret } });
    expect(response.status).toBe(200);
    const body = await response.text();
    expect(body).not.toContain(secret);
    expect(JSON.parse(body).principal).toEqual({ kind: "admin", id: "admin" });
    const line = response.headers.get("set-cookie") ?? "";
    expect(line).toMatch(/^iterate_session=bs_[a-z2-7]{24}\.\d+\.[A-Za-z0-9_-]{43}; /);
    expect(line).toContain("HttpOnly");
    expect(line).toContain("SameSite=Strict");
    expect(line).toContain("Path=/");
    expect(line).not.toContain(secret);
    const { root, socket } = await openApi(line.slice(0, line.indexOf(";")));
    const session = root.authenticate({ type: "session-cookie" });
    expect((await session.__describe()).principal).toEqual({ kind: "admin", id: "admin" });
    socket.close();
  });

  test("a same-origin fetch without Origin (as Chromium sends it) signs in by Sec-Fetch-Site", async () => {
    const response = await exports.default.fetch(`${ORIGIN}/auth/sign-in`, {
      method: "POST",
      headers: { "sec-fetch-site": "same-origin", "content-type": "application/json" },
      body: JSON.stringify({ credentials: { type: "admin-secret", secret } }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("set-cookie")).toMatch(/^iterate_session=/);
  });

  test("on https the cookie is __Host- prefixed and Secure", async () => {
    const response = await exports.default.fetch("https://os.test/auth/sign-in", {
      method: "POST",
      headers: { origin: "https://os.test", "content-type": "application/json" },
      body: JSON.stringify({ credentials: { type: "admin-secret", secret } }),
    });
    const line = response.headers.get("set-cookie") ?? "";
    expect(line).toMatch(/^__Host-iterate_session=/);
    expect(line).toContain("; Secure");
  });

  test.each([
    ["no Origin", { origin: "" }],
    ["another site's Origin", { origin: "http://evil.test" }],
    ["another port on the same host", { origin: "http://os.test:8080" }],
    ["a form's content type", { "content-type": "text/plain" }],
    ["no Origin and a same-site fetch", { origin: "", "sec-fetch-site": "same-site" }],
    ["no Origin and a cross-site fetch", { origin: "", "sec-fetch-site": "cross-site" }],
    ["another site's Origin despite a same-origin fetch header", { origin: "http://evil.test", "sec-fetch-site": "same-origin" }],
  ])("sign-in refuses %s (CSRF): 403 PERMISSION_DENIED, no cookie", async (_name, headers) => {
    const response = await post("/auth/sign-in", { credentials: { type: "admin-secret", secret } }, headers);
    expect(response.status).toBe(403);
    expect((await response.json<{ code: string }>()).code).toBe("PERMISSION_DENIED");
    expect(response.headers.get("set-cookie")).toBeNull();
  });

  test.each([
    ["a wrong secret", { type: "admin-secret", secret: "wrong" }, 401, "UNAUTHENTICATED"],
    ["impersonation", { type: "impersonate", secret, principal: "mallory", projectIds: [] }, 401, "UNAUTHENTICATED"],
    ["the cookie lane itself", { type: "session-cookie" }, 401, "UNAUTHENTICATED"],
    ["a forged token", { type: "bearer", token: "itk_e30.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }, 401, "UNAUTHENTICATED"],
  ])("sign-in with %s sets no cookie", async (_name, credentials, status, code) => {
    const response = await post("/auth/sign-in", { credentials });
    expect(response.status).toBe(status);
    expect((await response.json<{ code: string }>()).code).toBe(code);
    expect(response.headers.get("set-cookie")).toBeNull();
  });

  test(`a body over SIGN_IN_BODY_MAX_BYTES (${LIMITS.SIGN_IN_BODY_MAX_BYTES}) is refused before it is parsed`, async () => {
    const response = await post("/auth/sign-in", JSON.stringify({ credentials: { type: "admin-secret", secret: "x".repeat(LIMITS.SIGN_IN_BODY_MAX_BYTES) } }));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect((await post("/auth/sign-in", "not json")).status).toBe(400);
  });

  test("API_BODY_READ_TIMEOUT_MS: a sign-in body that trickles and never ends is answered TIMEOUT", async () => {
    const saved = LIMITS.API_BODY_READ_TIMEOUT_MS;
    // The Worker runs in this isolate: the limit is read at each request.
    (LIMITS as Record<string, number>).API_BODY_READ_TIMEOUT_MS = 300;
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    void writer.write(new TextEncoder().encode('{"credentials":'));
    try {
      const started = Date.now();
      const response = await exports.default.fetch(`${ORIGIN}/auth/sign-in`, { method: "POST", headers: { origin: ORIGIN, "content-type": "application/json" }, body: readable, duplex: "half" } as RequestInit);
      expect(await response.json()).toMatchObject({ code: "TIMEOUT" });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      (LIMITS as Record<string, number>).API_BODY_READ_TIMEOUT_MS = saved;
      void writer.close().catch(() => undefined);
    }
  });

  test("a deployment without ITERATE_SESSION_KEY refuses sign-in (503 UNAVAILABLE): no public default key", async () => {
    const bare = { ...(env as Env), ITERATE_SESSION_KEY: undefined };
    const request = new Request(`${ORIGIN}/auth/sign-in`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/json" },
      body: JSON.stringify({ credentials: { type: "admin-secret", secret } }),
    });
    const response = await serveBrowserAuth(request, bare, "sign-in");
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: "UNAVAILABLE" });
    expect(response.headers.get("set-cookie")).toBeNull();
  });
});

describe("the cookie lane refuses what it must", () => {
  test("a cross-site WebSocket handshake gets no use of the cookie (cross-site WebSocket hijacking)", async () => {
    const cookie = await signIn();
    // (workerd's own fetch fills in Origin when a handshake has none, so only foreign ones are tried here.)
    for (const origin of ["http://evil.test", "http://os.test:8080", "null"]) {
      const { root, socket } = await openApi(cookie, origin);
      await expectCode(root.authenticate({ type: "session-cookie" }).__describe(), "UNAUTHENTICATED", String(origin));
      socket.close();
    }
  });

  test("a tampered, foreign or oversized cookie does not authenticate", async () => {
    const cookie = await signIn();
    const value = cookie.slice(cookie.indexOf("=") + 1);
    const [id, expiry, signature] = value.split(".") as [string, string, string];
    const tampered = [
      `${id}.${Number(expiry) + 3600}.${signature}`,
      `${id.slice(0, -1)}${id.endsWith("a") ? "b" : "a"}.${expiry}.${signature}`,
      `${id}.${expiry}.${signature.slice(0, -1)}${signature.endsWith("A") ? "B" : "A"}`,
      `${value}${"x".repeat(LIMITS.SESSION_COOKIE_MAX_LENGTH)}`,
    ];
    for (const variant of tampered) await expectCode(authenticateSessionCookie(env as Env, variant), "UNAUTHENTICATED", variant);
    // Another deployment's key, or a rotated admin secret, signs a different cookie.
    await expectCode(authenticateSessionCookie({ ...(env as Env), ITERATE_SESSION_KEY: "another-key" }, value), "UNAUTHENTICATED");
    await expectCode(authenticateSessionCookie({ ...(env as Env), ITERATE_ADMIN_SECRET: "rotated" }, value), "UNAUTHENTICATED");
    expect((await authenticateSessionCookie(env as Env, value)).principal.kind).toBe("admin");
  });

  test(`a Cookie header over COOKIE_HEADER_MAX_LENGTH (${LIMITS.COOKIE_HEADER_MAX_LENGTH}) is not read`, async () => {
    const cookie = await signIn();
    const { root, socket } = await openApi(`${cookie}; pad=${"p".repeat(LIMITS.COOKIE_HEADER_MAX_LENGTH)}`);
    await expectCode(root.authenticate({ type: "session-cookie" }).__describe(), "UNAUTHENTICATED");
    socket.close();
  });

  test("the cookie lane over an HTTP batch from this origin works; from another it does not", async () => {
    const cookie = await signIn();
    const batch = (origin: string) =>
      newHttpBatchRpcSession<UnauthenticatedRoot>(new Request(`${ORIGIN}/api`, { headers: { cookie, origin }, fetcher: exports.default } as RequestInit)) as any;
    expect((await batch(ORIGIN).authenticate({ type: "session-cookie" }).__describe()).principal.kind).toBe("admin");
    await expectCode(batch("http://evil.test").authenticate({ type: "session-cookie" }).__describe(), "UNAUTHENTICATED");
  });
});

describe("sign-out", () => {
  test("ends the session: open connections close (4001) and the cookie stops authenticating", async () => {
    const cookie = await signIn();
    const { root, closed } = await openApi(cookie);
    const session = root.authenticate({ type: "session-cookie" });
    expect((await session.__describe()).principal.kind).toBe("admin");
    const refused = await post("/auth/sign-out", {}, { cookie, origin: "http://evil.test" });
    expect(refused.status).toBe(403);
    expect((await session.__describe()).principal.kind).toBe("admin");

    const response = await post("/auth/sign-out", {}, { cookie });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ signedOut: true, ended: true });
    expect(response.headers.get("set-cookie")).toMatch(/^iterate_session=; .*Max-Age=0/);
    const { code, reason } = await closed;
    expect(code).toBe(4001);
    expect(reason).toContain("signed out");
    await expectCode(authenticateSessionCookie(env as Env, cookie.slice(cookie.indexOf("=") + 1)), "UNAUTHENTICATED");
    const again = await openApi(cookie);
    await expectCode(again.root.authenticate({ type: "session-cookie" }).__describe(), "UNAUTHENTICATED");
    again.socket.close();
    // Signing out twice, or with no cookie at all, is harmless.
    expect(await (await post("/auth/sign-out", {}, { cookie })).json()).toEqual({ signedOut: true, ended: false });
    expect(await (await post("/auth/sign-out", {})).json()).toEqual({ signedOut: true, ended: false });
  });

  test("a session signed in with a bearer token ends when the token is revoked", async () => {
    const admin = newHttpBatchRpcSession<UnauthenticatedRoot>(new Request(`${ORIGIN}/api`, { fetcher: exports.default } as RequestInit)) as any;
    const adminSession = admin.authenticate({ type: "admin-secret", secret });
    const { token, tokenId } = await adminSession.tokens.issue({ principal: "browser-user", projectIds: [], ttlSeconds: 600 });
    const cookie = await signIn({ type: "bearer", token });
    const { root, closed } = await openApi(cookie);
    const session = root.authenticate({ type: "session-cookie" });
    expect((await session.__describe()).principal).toEqual({ kind: "impersonated", id: "browser-user", projectIds: [] });
    const revoker = newHttpBatchRpcSession<UnauthenticatedRoot>(new Request(`${ORIGIN}/api`, { fetcher: exports.default } as RequestInit)) as any;
    await revoker.authenticate({ type: "admin-secret", secret }).tokens.revoke(tokenId);
    expect((await closed).code).toBe(4001);
    await expectCode(authenticateSessionCookie(env as Env, cookie.slice(cookie.indexOf("=") + 1)), "UNAUTHENTICATED");
  });
});

describe("the session cookie on /streams", () => {
  test("a same-origin request reads and writes streams with the cookie alone; another origin's request gets no use of it", async () => {
    const cookie = await signIn();
    const { root, socket } = await openApi(cookie);
    const slug = `cookie-streams-${Date.now().toString(36)}`;
    await root.authenticate({ type: "session-cookie" }).projects.create({ slug }).whoami();
    socket.close();
    const url = `${ORIGIN}/streams/${slug}/from-the-page`;
    const created = await exports.default.fetch(url, { method: "PUT", headers: { cookie, origin: ORIGIN, "content-type": "application/json" } });
    expect(created.status).toBe(201);
    const appended = await exports.default.fetch(url, { method: "POST", headers: { cookie, origin: ORIGIN, "content-type": "application/json" }, body: JSON.stringify({ hello: "page" }) });
    expect(appended.status).toBeLessThan(300);
    const read = await exports.default.fetch(`${url}?offset=-1`, { headers: { cookie, origin: ORIGIN } });
    expect(await read.json()).toEqual([{ hello: "page" }]);
    // A page of another site sending the visitor's cookie: the cookie counts for nothing there.
    const foreign = await exports.default.fetch(`${url}?offset=-1`, { headers: { cookie, origin: "http://evil.test" } });
    expect(foreign.status).toBe(401);
    const none = await exports.default.fetch(`${url}?offset=-1`, { headers: { origin: ORIGIN } });
    expect(none.status).toBe(401);
  });
});
