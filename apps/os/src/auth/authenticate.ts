import { ItxError } from "iterate/errors";
import { verifyToken } from "./bearer-token.ts";
import { registryStatus } from "./token-registry.ts";
import { secretsEqual } from "./constant-time.ts";
import { parseCredentials } from "./credentials.ts";
import { authenticateSessionCookie } from "./cookie-lane.ts";
import type { Authenticated, Handshake } from "./authenticated.ts";

export type { Authenticated, Handshake };

/**
 * Turns untrusted credentials into a Principal, or fails with `UNAUTHENTICATED`. This is the only
 * place the OS checks who a caller is (authentication happens at connect and nowhere else).
 */
export async function authenticate(env: Env, input: unknown, handshake: Handshake = {}): Promise<Authenticated> {
  const credentials = parseCredentials(input);
  switch (credentials.type) {
    case "admin-secret":
      await requireAdminSecret(env, credentials.secret);
      return { principal: { kind: "admin", id: "admin" } };
    case "impersonate":
      await requireAdminSecret(env, credentials.secret);
      return { principal: { kind: "impersonated", id: credentials.principal, projectIds: [...new Set(credentials.projectIds)] } };
    case "bearer": {
      const { principal, tokenId, expiresAt } = await verifyToken(env.ITERATE_ADMIN_SECRET, credentials.token);
      const status = await registryStatus(env, { tokenId, principal: principal.id, projectIds: principal.projectIds, expiresAt });
      if (status === "revoked") throw new ItxError("UNAUTHENTICATED", "bearer token has been revoked", { details: { reason: "revoked" } });
      if (status === "unknown") throw new ItxError("UNAUTHENTICATED", "bearer token is not valid for this deployment", { details: { reason: "rejected" } });
      return { principal, tokenId, tokenExpiresAt: expiresAt, expiresAt };
    }
    case "session-cookie":
      return authenticateSessionCookie(env, handshake.sessionCookie);
    case "operator-session":
      // No operator grants are issued by this deployment yet: every one is unknown.
      throw new ItxError("UNAUTHENTICATED", "operator-session token is not valid for this deployment", {
        details: { reason: "rejected" },
      });
  }
}

async function requireAdminSecret(env: Env, secret: string): Promise<void> {
  const expected = env.ITERATE_ADMIN_SECRET;
  if (expected === undefined || expected === "") {
    throw new ItxError("UNAUTHENTICATED", "this deployment has no admin secret configured (set ITERATE_ADMIN_SECRET)", {
      details: { reason: "rejected" },
    });
  }
  if (!(await secretsEqual(secret, expected))) {
    throw new ItxError("UNAUTHENTICATED", "the admin secret is wrong", { details: { reason: "rejected" } });
  }
}
