import type { Principal } from "iterate/types";
import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";

// Bearer tokens this deployment issues itself: `itk_<payload>.<signature>`, both base64url, the
// signature an HMAC-SHA256 of the payload under a key derived from the admin secret. Rotating
// the admin secret revokes every token.

interface TokenPayload {
  /** The token's id, for listing and revoking it one by one. */
  jti: string;
  sub: string;
  projectIds: string[];
  /** Expiry, epoch seconds. */
  exp: number;
}


const encoder = new TextEncoder();

/** Signs a token; the caller records it in the registry (token-registry.ts) under `tokenId`. */
export async function issueToken(
  adminSecret: string,
  input: { tokenId: string; principal: string; projectIds: string[]; expiresAt: number },
): Promise<string> {
  const payload: TokenPayload = { jti: input.tokenId, sub: input.principal, projectIds: input.projectIds, exp: input.expiresAt };
  const body = base64url(encoder.encode(JSON.stringify(payload)));
  return `itk_${body}.${base64url(await sign(adminSecret, body))}`;
}

const rejected = (why: string) => new ItxError("UNAUTHENTICATED", `bearer token ${why}`, { details: { reason: "rejected" } });

/**
 * The principal a token names and the token's id, or UNAUTHENTICATED. Only the canonical spelling
 * verifies: base64url without padding whose unused low bits are zero, so one token has one text.
 * Revocation is the caller's to check (token-registry.ts).
 */
export async function verifyToken(
  adminSecret: string | undefined,
  token: string,
): Promise<{ principal: Principal & { kind: "impersonated" }; tokenId: string; expiresAt: number }> {
  if (!adminSecret) throw rejected("cannot be checked: this deployment has no admin secret");
  const match = /^itk_([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) throw rejected("is not valid for this deployment");
  const [, body, signature] = match as unknown as [string, string, string];
  const signatureBytes = canonicalBytes(signature);
  const bodyBytes = canonicalBytes(body);
  if (!signatureBytes || !bodyBytes) throw rejected("is not valid for this deployment");
  const key = await hmacKey(adminSecret);
  if (!(await crypto.subtle.verify("HMAC", key, signatureBytes, encoder.encode(body)))) throw rejected("is not valid for this deployment");
  let payload: Partial<TokenPayload>;
  try {
    payload = JSON.parse(new TextDecoder().decode(bodyBytes)) as Partial<TokenPayload>;
  } catch {
    throw rejected("is not valid for this deployment");
  }
  if (typeof payload.exp !== "number" || payload.exp * 1000 < Date.now()) throw rejected("has expired");
  // Tokens from before revocation existed carry no id: they cannot be listed or revoked, so they no longer verify.
  if (typeof payload.jti !== "string" || typeof payload.sub !== "string" || !Array.isArray(payload.projectIds)) {
    throw rejected("was issued before tokens could be revoked; issue a new one");
  }
  return { principal: { kind: "impersonated", id: payload.sub, projectIds: payload.projectIds }, tokenId: payload.jti, expiresAt: payload.exp };
}

/** Validates what an admin asks a token for. `projectIds` may name projects by id or slug; the session resolves them. */
export function parseTokenRequest(input: unknown): { principal: string; projectIds: string[]; ttlSeconds: number } {
  if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "issueToken takes { principal, projectIds, ttlSeconds? }");
  const { principal, projectIds, ttlSeconds = 3600, ...rest } = input as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `issueToken has no field(s) ${Object.keys(rest).join(", ")}`);
  if (typeof principal !== "string" || principal.length === 0 || principal.length > LIMITS.PRINCIPAL_ID_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `principal is 1-${LIMITS.PRINCIPAL_ID_MAX_LENGTH} characters`);
  }
  if (!Array.isArray(projectIds) || projectIds.length > LIMITS.IMPERSONATED_PROJECT_IDS_MAX || projectIds.some((id) => typeof id !== "string")) {
    throw new ItxError("INVALID_ARGUMENT", "projectIds is an array of project ids");
  }
  if (typeof ttlSeconds !== "number" || !Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > LIMITS.TOKEN_TTL_MAX_SECONDS) {
    throw new ItxError("INVALID_ARGUMENT", `ttlSeconds is an integer from 1 to ${LIMITS.TOKEN_TTL_MAX_SECONDS}`, { details: limitDetails("TOKEN_TTL_MAX_SECONDS") });
  }
  return { principal, projectIds: [...new Set(projectIds as string[])], ttlSeconds };
}

async function sign(secret: string, body: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(body)));
}

function hmacKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", encoder.encode(`iterate bearer tokens v1:${secret}`), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

// The bytes of canonical base64url text, or undefined: malformed text (atob throws on a length of
// 4n+1) and the other spellings of the same bytes (non-zero unused bits) are not tokens.
function canonicalBytes(text: string): Uint8Array | undefined {
  let binary: string;
  try {
    binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return undefined;
  }
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  return base64url(bytes) === text ? bytes : undefined;
}
