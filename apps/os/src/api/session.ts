import { RpcTarget } from "capnweb";
import type { Principal, ProjectSummary, SessionDescription } from "iterate/types";
import { ItxError } from "iterate/errors";
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

  constructor(env: Env, _connection: Connection, principal: Principal) {
    super();
    this.#env = env;
    this.#principal = principal;
  }

  __describe(): SessionDescription {
    return describeNode(
      {
        kind: "session",
        instructions:
          "An authenticated session. Open a project with projects.get(slugOrId); list what you can reach with projects.list().",
        children: {
          projects: "the projects this principal can reach: list(), get(slugOrId), create({ slug })",
          ...(this.#principal.kind === "admin" ? { streams: "admin: deployment-wide streams, streams.get(path)" } : {}),
        },
      },
      { kind: "session" as const, principal: structuredClone(this.#principal) },
    );
  }

  /** Admin only: the deployment-wide streams, outside every project. */
  get streams(): StreamCollection {
    return new StreamCollection(this.#env, this.#principal);
  }

  get projects(): ProjectCollectionRpcTarget {
    return new ProjectCollectionRpcTarget(this.#principal);
  }
}

/** The projects a principal can reach. Projects arrive with the project domain; until then none exist. */
export class ProjectCollectionRpcTarget extends RpcTarget {
  readonly #principal: Principal;

  constructor(principal: Principal) {
    super();
    this.#principal = principal;
  }

  list(): ProjectSummary[] {
    return [];
  }

  get(slugOrId: unknown): never {
    throw new ItxError("NOT_FOUND", `no project ${JSON.stringify(String(slugOrId).slice(0, 128))} for ${this.#principal.id}`);
  }

  create(_input: unknown): never {
    throw new ItxError("UNAVAILABLE", "projects cannot be created on this deployment yet");
  }
}
