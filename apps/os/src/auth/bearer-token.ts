import type { Principal } from "iterate/types";
import { ItxError } from "iterate/errors";
import { LIMITS } from "../limits.ts";

// Bearer tokens this deployment issues itself: `itk_<payload>.<signature>`, both base64url, the
// signature an HMAC-SHA256 of the payload under a key derived from the admin secret. Rotating
// the admin secret revokes every token.

interface TokenPayload {
  sub: string;
  projectIds: string[];
  /** Expiry, epoch seconds. */
  exp: number;
}

/** Longest lifetime of an issued token. */
export const TOKEN_TTL_MAX_SECONDS = 30 * 24 * 3600;

const encoder = new TextEncoder();

export async function issueToken(adminSecret: string, input: { principal: string; projectIds: string[]; ttlSeconds: number }): Promise<string> {
  const payload: TokenPayload = { sub: input.principal, projectIds: input.projectIds, exp: Math.floor(Date.now() / 1000) + input.ttlSeconds };
  const body = base64url(encoder.encode(JSON.stringify(payload)));
  return `itk_${body}.${base64url(await sign(adminSecret, body))}`;
}

const rejected = (why: string) => new ItxError("UNAUTHENTICATED", `bearer token ${why}`, { details: { reason: "rejected" } });

/** The principal a token names, or UNAUTHENTICATED. */
export async function verifyToken(adminSecret: string | undefined, token: string): Promise<Principal> {
  if (!adminSecret) throw rejected("cannot be checked: this deployment has no admin secret");
  const match = /^itk_([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(token);
  if (!match) throw rejected("is not valid for this deployment");
  const [, body, signature] = match as unknown as [string, string, string];
  const key = await hmacKey(adminSecret);
  if (!(await crypto.subtle.verify("HMAC", key, unbase64url(signature), encoder.encode(body)))) throw rejected("is not valid for this deployment");
  let payload: TokenPayload;
  try {
    payload = JSON.parse(new TextDecoder().decode(unbase64url(body))) as TokenPayload;
  } catch {
    throw rejected("is not valid for this deployment");
  }
  if (typeof payload.exp !== "number" || payload.exp * 1000 < Date.now()) throw rejected("has expired");
  return { kind: "impersonated", id: payload.sub, projectIds: payload.projectIds };
}

/** Validates what an admin asks a token for. */
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
  if (typeof ttlSeconds !== "number" || !Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > TOKEN_TTL_MAX_SECONDS) {
    throw new ItxError("INVALID_ARGUMENT", `ttlSeconds is an integer from 1 to ${TOKEN_TTL_MAX_SECONDS}`, { details: { limit: "TOKEN_TTL_MAX_SECONDS" } });
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

function unbase64url(text: string): Uint8Array {
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}
