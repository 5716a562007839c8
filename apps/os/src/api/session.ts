import { RpcTarget } from "capnweb";
import type { Principal, SessionDescription } from "iterate/types";
import { ItxError } from "iterate/errors";
import { issueToken, parseTokenRequest } from "../auth/bearer-token.ts";
import { ProjectAccess, ProjectCollectionRpcTarget } from "../project/project-collection.ts";
import type { Env } from "../env.ts";
import type { Connection } from "./connection.ts";
import { describeNode } from "./describe.ts";
import { StreamCollection } from "../stream/stream-collection.ts";

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
                issueToken: "admin: issueToken({ principal, projectIds, ttlSeconds? }) -> a bearer token for withItx",
              }
            : {}),
        },
      },
      { kind: "session" as const, principal: structuredClone(this.#principal) },
    );
  }

  /**
   * Admin only: a bearer token acting as `principal` with exactly `projectIds`, for `withItx`
   * and `{ type: "bearer", token }` credentials. Signed with the admin secret.
   */
  async issueToken(input: unknown): Promise<{ token: string; expiresInSeconds: number }> {
    if (this.#principal.kind !== "admin") throw new ItxError("PERMISSION_DENIED", "only an admin session can issue tokens");
    const request = parseTokenRequest(input);
    return { token: await issueToken(this.#env.ITERATE_ADMIN_SECRET ?? "", request), expiresInSeconds: request.ttlSeconds };
  }

  /** Admin only: the deployment-wide streams, outside every project. */
  get streams(): StreamCollection {
    return new StreamCollection(this.#env, this.#principal);
  }

  get projects(): ProjectCollectionRpcTarget {
    return new ProjectCollectionRpcTarget(this.#env, this.#access, this.#connection);
  }
}
