import type { Principal } from "iterate/types";
import { ItxError } from "iterate/errors";
import type { Env } from "../env.ts";
import { authenticate } from "../auth/authenticate.ts";
import { ShortCache } from "./request-cache.ts";

/**
 * Who is calling a plain-HTTP route. Each lane reads one kind of credential from the request and
 * hands it to `authenticate()`, the one place identities are checked; the first lane that finds
 * its credential decides (a wrong credential is refused, never passed to the next lane). Today:
 * `Authorization: Bearer <token>`. The browser's session cookie becomes a second lane here.
 */
export type CredentialLane = (request: Request) => unknown;

export const CREDENTIAL_LANES: readonly CredentialLane[] = [bearerLane];

function bearerLane(request: Request): unknown {
  const header = request.headers.get("authorization");
  if (header === null) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  // A malformed Authorization header is a credential that fails, not an absent one.
  return { type: "bearer", token: match?.[1] ?? "" };
}

const authenticated = new ShortCache<Principal>();

/** The principal of an HTTP request, or UNAUTHENTICATED. Successes are reused briefly (request-cache.ts). */
export async function authenticateRequest(env: Env, request: Request, lanes: readonly CredentialLane[] = CREDENTIAL_LANES): Promise<Principal> {
  for (const lane of lanes) {
    const credentials = lane(request);
    if (credentials === undefined) continue;
    // Keyed by the whole credential: only an identical secret finds the entry.
    return authenticated.get(JSON.stringify(credentials), async () => (await authenticate(env, credentials)).principal);
  }
  throw new ItxError("UNAUTHENTICATED", "send a bearer token: Authorization: Bearer <token>", { details: { reason: "missing" } });
}
