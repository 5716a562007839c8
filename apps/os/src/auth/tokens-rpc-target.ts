import { RpcTarget } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import type { IssuedTokenAnswer } from "iterate/types";
import type { Env } from "../env.ts";
import { findProject } from "../project/project-directory.ts";
import { issueToken, parseTokenRequest } from "./bearer-token.ts";
import { listIssued, mintTokenId, parseTokenId, recordIssued, recordRevoked, type IssuedToken } from "./token-registry.ts";
import { installMissingMemberError } from "../api/missing-member.ts";

export type { IssuedTokenAnswer };

/**
 * `session.tokens` (admin only): bearer tokens for `withItx` and `{ type: "bearer", token }`.
 * Tokens are listed and revoked by id; the token text itself is shown once, when issued.
 */
export class TokensRpcTarget extends RpcTarget {
  readonly #env: Env;
  readonly #admin: string;

  constructor(env: Env, admin: string) {
    super();
    this.#env = env;
    this.#admin = admin;
  }

  /**
   * A token acting as `principal` in exactly `projectIds` (ids or slugs), for `ttlSeconds`.
   *
   * @example
   * const { token, tokenId } = await session.tokens.issue({ principal: "ci", projectIds: ["my-site"] });
   */
  async issue(input: unknown): Promise<IssuedTokenAnswer> {
    const request = parseTokenRequest(input);
    const projectIds = await Promise.all(
      request.projectIds.map(async (slugOrId) => {
        const record = await findProject(this.#env, slugOrId);
        if (!record) throw new ItxError("INVALID_ARGUMENT", `no project ${JSON.stringify(slugOrId)} to issue a token for`);
        return record.projectId;
      }),
    );
    const tokenId = mintTokenId();
    const expiresAt = Math.floor(Date.now() / 1000) + request.ttlSeconds;
    const issued = { tokenId, principal: request.principal, projectIds: [...new Set(projectIds)], expiresAt };
    // Recorded before it exists anywhere else, so every token that can verify can be listed and revoked.
    await recordIssued(this.#env, issued, this.#admin);
    const token = await issueToken(this.#env.ITERATE_ADMIN_SECRET ?? "", issued);
    return { token, tokenId, expiresInSeconds: request.ttlSeconds };
  }

  /** Every issued token (never the token text), newest first, with `revokedAt` once revoked. */
  async list(): Promise<IssuedToken[]> {
    return listIssued(this.#env);
  }

  /**
   * Revokes a token: its next `authenticate` fails, and sessions open with it end now. Answers
   * whether the id named an issued token (revoking twice is harmless).
   */
  async revoke(tokenId: unknown): Promise<{ revoked: boolean }> {
    return { revoked: await recordRevoked(this.#env, parseTokenId(tokenId), this.#admin) };
  }
}
installMissingMemberError(TokensRpcTarget, "tokens");
