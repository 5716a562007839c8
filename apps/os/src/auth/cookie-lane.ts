import { ItxError } from "iterate/errors";
import type { Authenticated } from "./authenticated.ts";
import { liveSession } from "./browser-session-registry.ts";
import { cookieKey, verifyCookie } from "./session-cookie.ts";
import { registryStatus } from "./token-registry.ts";

const rejected = (why: string) =>
  new ItxError("UNAUTHENTICATED", `no browser session: ${why}; sign in again`, { details: { reason: "rejected" } });

/**
 * The `from-server-cookie` lane: `{ type: "session-cookie" }` authenticates with the session
 * cookie that came with a same-origin handshake. The cookie must verify, its session must still be
 * live in the registry, and a session signed in with a bearer token needs the token unrevoked.
 */
export async function authenticateSessionCookie(env: Env, cookie: string | undefined): Promise<Authenticated> {
  if (cookie === undefined) throw rejected("no session cookie came with a same-origin handshake");
  const verified = await verifyCookie(await cookieKey(env), cookie);
  if (!verified) throw rejected("the session cookie is not valid for this deployment or has expired");
  const record = await liveSession(env, verified.sessionId);
  if (!record || record.expiresAt !== verified.expiresAt) throw rejected("the session has ended");
  if (record.token) {
    const { principal } = record;
    const status = await registryStatus(env, {
      tokenId: record.token.tokenId,
      principal: principal.id,
      projectIds: principal.kind === "impersonated" ? principal.projectIds : [],
      expiresAt: record.token.expiresAt,
    });
    if (status !== "issued") throw rejected("the bearer token it was signed in with has been revoked");
  }
  return {
    principal: record.principal,
    browserSessionId: record.sessionId,
    expiresAt: record.expiresAt,
    ...(record.token ? { tokenId: record.token.tokenId } : {}),
  };
}
