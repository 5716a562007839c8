import { RpcTarget } from "capnweb";
import type { Principal, SessionDescription } from "iterate/types";
import { ItxError } from "iterate/errors";
import { TokensRpcTarget, type IssuedTokenAnswer } from "../auth/tokens-rpc-target.ts";
import { ProjectAccess, ProjectCollectionRpcTarget } from "../project/project-collection.ts";
import type { Env } from "../env.ts";
import type { Connection } from "./connection.ts";
import { describeNode } from "./describe.ts";
import { StreamCollection } from "../stream/stream-collection.ts";
import { deploymentRepos, type ReposRpcTarget } from "../repo/repos-built-in.ts";
import { installMissingMemberError } from "./missing-member.ts";

/**
 * What `authenticate()` answers: a catalogue that vends contexts. It is not itself a context;
 * which handles it vends depends only on the principal fixed at authentication.
 */
export class SessionRpcTarget extends RpcTarget {
  // Private fields never cross RPC: capnweb exposes only prototype methods and getters.
  readonly #env: Env;
  readonly #principal: Principal;
  readonly #connection: Connection;
  // What this session may reach; projects it creates join the set.
  readonly #access: ProjectAccess;

  constructor(env: Env, connection: Connection, principal: Principal) {
    super();
    this.#env = env;
    this.#principal = principal;
    this.#connection = connection;
    this.#access = new ProjectAccess(principal);
  }

  __describe(): SessionDescription {
    return describeNode(
      {
        kind: "session",
        instructions:
          "An authenticated session. Open a project with projects.get(slugOrId); list what you can reach with projects.list().",
        children: {
          projects: "the projects this principal can reach: list(), get(slugOrId), create({ slug })",
          ...(this.#principal.kind === "admin"
            ? {
                streams: "admin: deployment-wide streams, streams.get(path)",
                repos: "admin: deployment-wide repositories, repos.create({ path }), repos.get(path), repos.list()",
                issueToken: "admin: issueToken({ principal, projectIds, ttlSeconds? }) -> { token, tokenId }, a bearer token for withItx (projectIds: ids or slugs)",
                tokens: "admin: tokens.issue(...), tokens.list(), tokens.revoke(tokenId)",
              }
            : {}),
        },
      },
      { kind: "session" as const, principal: structuredClone(this.#principal) },
    );
  }

  /**
   * Admin only: a bearer token acting as `principal` with exactly `projectIds` (ids or slugs), for
   * `withItx` and `{ type: "bearer", token }` credentials. The same as `tokens.issue`.
   */
  async issueToken(input: unknown): Promise<IssuedTokenAnswer> {
    return this.tokens.issue(input);
  }

  /** Admin only: issue, list and revoke bearer tokens. */
  get tokens(): TokensRpcTarget {
    if (this.#principal.kind !== "admin") throw new ItxError("PERMISSION_DENIED", "only an admin session manages tokens");
    return new TokensRpcTarget(this.#env, this.#principal.id);
  }

  /** Admin only: the deployment-wide streams, outside every project. */
  get streams(): StreamCollection {
    return new StreamCollection(this.#env, this.#principal);
  }

  /** Admin only: the deployment-wide repositories, outside every project. */
  get repos(): ReposRpcTarget {
    return deploymentRepos(this.#env, this.#principal);
  }

  get projects(): ProjectCollectionRpcTarget {
    return new ProjectCollectionRpcTarget(this.#env, this.#access, this.#connection);
  }
}
installMissingMemberError(SessionRpcTarget, "session");
