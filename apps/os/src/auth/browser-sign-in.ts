import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";
import { readRequestBody } from "../limits/request-body.ts";
import { codedErrorResponse } from "../api/coded-response.ts";
import { authenticate } from "./authenticate.ts";
import type { Authenticated } from "./authenticated.ts";
import { liveSession, recordEnded, recordStarted, type BrowserSessionRecord } from "./browser-session-registry.ts";
import { isSameOrigin } from "./same-origin.ts";
import { BROWSER_SESSION_TTL_SECONDS, cookieKey, mintSessionId, readCookie, setCookieHeader, signCookie, verifyCookie } from "./session-cookie.ts";

/**
 * The browser's way in. `POST /auth/sign-in` with `{ credentials }` (an admin secret or a bearer
 * token) answers `{ principal }` and sets the session cookie; `POST /auth/sign-out` ends the
 * session and clears it. Both answer only pages of this origin that send JSON (CSRF).
 */
export async function serveBrowserAuth(request: Request, env: Env, action: "sign-in" | "sign-out"): Promise<Response> {
  try {
    if (request.method !== "POST") {
      return Response.json({ code: "INVALID_ARGUMENT", message: `POST /auth/${action}` }, { status: 405, headers: { allow: "POST" } });
    }
    // A cross-site form can post text/plain but not application/json without a preflight this
    // route never grants; the Origin check is the real guard, this one costs nothing.
    if (!isSameOrigin(request) || !(request.headers.get("content-type") ?? "").startsWith("application/json")) {
      throw new ItxError("PERMISSION_DENIED", `/auth/${action} answers only this OS's own pages (same Origin, a JSON body)`, {
        details: { reason: "cross-origin" },
      });
    }
    return action === "sign-in" ? await signIn(request, env) : await signOut(request, env);
  } catch (error) {
    return codedErrorResponse(error, `uncaught error serving /auth/${action}`);
  }
}

async function signIn(request: Request, env: Env): Promise<Response> {
  const key = await cookieKey(env);
  const body = await readJson(request);
  const credentials = (body as { credentials?: unknown }).credentials;
  const type = (credentials as { type?: unknown } | undefined)?.type;
  // A browser session stands for the admin or a bearer token's principal; the other lanes are
  // for tools (impersonation), or are this lane itself.
  if (type !== "admin-secret" && type !== "bearer") {
    throw new ItxError("UNAUTHENTICATED", 'sign in with { credentials: { type: "admin-secret", secret } } or { type: "bearer", token }', {
      details: { reason: "malformed" },
    });
  }
  const authenticated = await authenticate(env, credentials);
  const record = sessionRecordFor(authenticated);
  await recordStarted(env, record);
  const url = new URL(request.url);
  const cookie = await signCookie(key, record.sessionId, record.expiresAt);
  const maxAge = record.expiresAt - Math.floor(Date.now() / 1000);
  return Response.json(
    { principal: record.principal, expiresAt: record.expiresAt },
    { headers: { "set-cookie": setCookieHeader(url, cookie, maxAge), "cache-control": "no-store" } },
  );
}

// A session signed in with a token ends no later than the token.
function sessionRecordFor(authenticated: Authenticated): BrowserSessionRecord {
  let expiresAt = Math.floor(Date.now() / 1000) + BROWSER_SESSION_TTL_SECONDS;
  let token: BrowserSessionRecord["token"];
  if (authenticated.tokenId !== undefined && authenticated.tokenExpiresAt !== undefined) {
    token = { tokenId: authenticated.tokenId, expiresAt: authenticated.tokenExpiresAt };
    expiresAt = Math.min(expiresAt, authenticated.tokenExpiresAt);
  }
  return { sessionId: mintSessionId(), principal: authenticated.principal, ...(token ? { token } : {}), expiresAt };
}

async function signOut(request: Request, env: Env): Promise<Response> {
  const url = new URL(request.url);
  const value = readCookie(request);
  let ended = false;
  if (value !== undefined) {
    const verified = await verifyCookie(await cookieKey(env), value);
    const record = verified && (await liveSession(env, verified.sessionId));
    if (record) {
      await recordEnded(env, record.sessionId, record.principal.id);
      ended = true;
    }
  }
  return Response.json({ signedOut: true, ended }, { headers: { "set-cookie": setCookieHeader(url, undefined), "cache-control": "no-store" } });
}

async function readJson(request: Request): Promise<unknown> {
  const limit = LIMITS.SIGN_IN_BODY_MAX_BYTES;
  const tooLarge = () => new ItxError("INVALID_ARGUMENT", `a sign-in body is at most ${limit} bytes`, { details: limitDetails("SIGN_IN_BODY_MAX_BYTES") });
  const body = await readRequestBody(request, limit, LIMITS.API_BODY_READ_TIMEOUT_MS, tooLarge);
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(body));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
    return parsed;
  } catch {
    throw new ItxError("INVALID_ARGUMENT", "a sign-in body is a JSON object { credentials }");
  }
}

