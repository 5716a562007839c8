import type { IssuedToken, StreamEvent } from "iterate/types";
import { ItxError } from "iterate/errors";
import { coordinateName, DEPLOYMENT_PROJECT_ID } from "../stream/coordinate.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { watchEnd } from "./watch-end.ts";

/**
 * The deployment's record of the bearer tokens it issued: `token/issued` and `token/revoked`
 * facts on the deployment-wide stream /tokens (platform-only types, see stream/write-authority.ts).
 * A token carries its id; verifying it checks the signature, then that no revocation is recorded.
 * Each token also has a stream of its own, /tokens/<id>, where open sessions made with it listen
 * for their revocation.
 */
export const TOKEN_ISSUED = "events.iterate.com/token/issued";
export const TOKEN_REVOKED = "events.iterate.com/token/revoked";

/** How the token registry names itself in the stamps of what it writes. */
export const AUTH_WRITER = "auth";

const REGISTRY = coordinateName({ projectId: DEPLOYMENT_PROJECT_ID, path: "/tokens" });

/** A token id: `tok_` and 20 random base-32 characters. */
export function mintTokenId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  return `tok_${Array.from(bytes, (byte) => alphabet[byte % 32]).join("")}`;
}

const TOKEN_ID = /^tok_[a-z2-7]{20}$/;

/** Validates a token id from untrusted input. */
export function parseTokenId(tokenId: unknown): string {
  if (typeof tokenId !== "string" || !TOKEN_ID.test(tokenId)) throw new ItxError("INVALID_ARGUMENT", "a token id is tok_ and 20 characters, as tokens.list() shows it");
  return tokenId;
}

export type { IssuedToken };

export async function recordIssued(env: Env, token: Omit<IssuedToken, "issuedAt" | "revokedAt">, by: string): Promise<void> {
  await registry(env).append({
    events: [{ type: TOKEN_ISSUED, payload: token, idempotencyKey: `token/issued:${token.tokenId}` }],
    stamp: { principal: by, platform: AUTH_WRITER },
  });
}

/** Records a revocation (once) and tells the sessions made with the token. Answers whether the token was known. */
export async function recordRevoked(env: Env, tokenId: string, by: string): Promise<boolean> {
  const issued = await registry(env).getByIdempotencyKey(`token/issued:${tokenId}`);
  if (!issued) return false;
  const fact = { type: TOKEN_REVOKED, payload: { tokenId }, idempotencyKey: `token/revoked:${tokenId}` };
  const stamp = { principal: by, platform: AUTH_WRITER };
  await registry(env).append({ events: [fact], stamp });
  await tokenStream(env, tokenId).append({ events: [fact], stamp });
  return true;
}

/**
 * What the registry says of a verified token: "issued" only when this deployment recorded issuing
 * exactly it (same principal, projects and expiry) and has not revoked it. A token signed with the
 * same admin secret elsewhere (another deployment, a restored backup) is "unknown": it could be
 * neither listed nor revoked here, so it does not authenticate.
 */
export async function registryStatus(
  env: Env,
  token: { tokenId: string; principal: string; projectIds: string[]; expiresAt: number },
): Promise<"issued" | "revoked" | "unknown"> {
  const [issued, revoked] = await Promise.all([
    registry(env).getByIdempotencyKey(`token/issued:${token.tokenId}`),
    registry(env).getByIdempotencyKey(`token/revoked:${token.tokenId}`),
  ]);
  if (revoked !== null && revoked.type === TOKEN_REVOKED && revoked.source.platform === AUTH_WRITER) return "revoked";
  if (issued === null || issued.type !== TOKEN_ISSUED || issued.source.platform !== AUTH_WRITER) return "unknown";
  const record = issued.payload as Partial<IssuedToken>;
  const same =
    record.principal === token.principal &&
    record.expiresAt === token.expiresAt &&
    JSON.stringify(record.projectIds) === JSON.stringify(token.projectIds);
  return same ? "issued" : "unknown";
}

/** Every token the deployment issued, newest first, with its revocation if any. */
export async function listIssued(env: Env): Promise<IssuedToken[]> {
  const tokens = new Map<string, IssuedToken>();
  let afterOffset = 0;
  for (;;) {
    const page: StreamEvent[] = await registry(env).getEvents({ afterOffset, types: [TOKEN_ISSUED, TOKEN_REVOKED], limit: 500 });
    for (const event of page) {
      const payload = event.payload as Partial<IssuedToken>;
      if (event.source.platform !== AUTH_WRITER || typeof payload.tokenId !== "string") continue;
      if (event.type === TOKEN_ISSUED) tokens.set(payload.tokenId, { ...(payload as IssuedToken), issuedAt: event.createdAt });
      else {
        const known = tokens.get(payload.tokenId);
        if (known) known.revokedAt = event.createdAt;
      }
    }
    const last = page.at(-1);
    if (!last) break; // A short page is not the end: pages stop at READ_PAGE_MAX_BYTES too.
    afterOffset = last.offset;
  }
  return [...tokens.values()].toReversed();
}

/**
 * Ends `close` when the token is revoked: a live subscription on the token's own stream, for as
 * long as the connection lasts. A token with too many open sessions (LIMITS.LIVE_SUBSCRIBERS_MAX) is
 * refused another.
 */
export function watchRevocation(env: Env, tokenId: string, key: string, close: () => void): Promise<() => void> {
  const tooMany = "this token has as many open sessions as one token may have (LIVE_SUBSCRIBERS_MAX); close one first";
  return watchEnd(tokenStream(env, tokenId), { key, endType: TOKEN_REVOKED, writer: AUTH_WRITER, tooMany }, close);
}

function registry(env: Env) {
  return streamStub(env.STREAM, REGISTRY);
}

function tokenStream(env: Env, tokenId: string) {
  return streamStub(env.STREAM, coordinateName({ projectId: DEPLOYMENT_PROJECT_ID, path: `/tokens/${tokenId}` }));
}
