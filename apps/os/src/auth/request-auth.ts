import type { Principal } from "iterate/types";
import { ItxError } from "iterate/errors";
import { authenticate, type Handshake } from "./authenticate.ts";
import { handshakeOf } from "./handshake.ts";
import { ShortCache } from "./request-cache.ts";

/**
 * Who is calling a plain-HTTP route. Each lane reads one kind of credential from the request and
 * hands it to `authenticate()`, the one place identities are checked; the first lane that finds
 * its credential decides (a wrong credential is refused, never passed to the next lane):
 * `Authorization: Bearer <token>`, then the browser's session cookie (same origin only).
 */
export type CredentialLane = (request: Request) => { credentials: unknown; handshake?: Handshake } | undefined;

export const CREDENTIAL_LANES: readonly CredentialLane[] = [bearerLane, cookieLane];

/** `Authorization: Bearer <token>`; the only lane of routes that serve no browser page (/mcp). */
export function bearerLane(request: Request): { credentials: unknown } | undefined {
  const header = request.headers.get("authorization");
  if (header === null) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  // A malformed Authorization header is a credential that fails, not an absent one.
  return { credentials: { type: "bearer", token: match?.[1] ?? "" } };
}

// The dashboard's pages read streams with the session cookie. Like the /api handshake, the cookie
// counts only on a same-origin request: another site's page gets no use of the visitor's cookie.
function cookieLane(request: Request): { credentials: unknown; handshake: Handshake } | undefined {
  const handshake = handshakeOf(request);
  if (handshake.sessionCookie === undefined) return undefined;
  return { credentials: { type: "session-cookie" }, handshake };
}

const authenticated = new ShortCache<Principal>();

/** The principal of an HTTP request, or UNAUTHENTICATED. Successes are reused briefly (request-cache.ts). */
export async function authenticateRequest(env: Env, request: Request, lanes: readonly CredentialLane[] = CREDENTIAL_LANES): Promise<Principal> {
  for (const lane of lanes) {
    const found = lane(request);
    if (found === undefined) continue;
    // Keyed by the whole credential (the cookie included): only an identical secret finds the entry.
    return authenticated.get(JSON.stringify(found), async () => (await authenticate(env, found.credentials, found.handshake)).principal);
  }
  throw new ItxError("UNAUTHENTICATED", "send a bearer token (Authorization: Bearer <token>), or sign in on this origin for a session cookie", { details: { reason: "missing" } });
}
