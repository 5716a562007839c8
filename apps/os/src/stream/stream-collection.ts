import { RpcTarget } from "cloudflare:workers";
import type { Principal } from "iterate/types";
import { ItxError } from "iterate/errors";
import type { Env } from "../env.ts";
import { coordinateName, DEPLOYMENT_PROJECT_ID, parseStreamPath } from "./coordinate.ts";
import { StreamCapability, streamStub } from "./stream-capability.ts";
import { installMissingMemberError } from "../api/missing-member.ts";

/**
 * `streams` on a session: the deployment-wide streams (project id `__null__`), admin only. Any
 * other principal gets NOT_FOUND, the same answer as for a stream that does not exist.
 */
export class StreamCollection extends RpcTarget {
  readonly #env: Env;
  readonly #principal: Principal;
  readonly #projectId: string;

  constructor(env: Env, principal: Principal, projectId: string = DEPLOYMENT_PROJECT_ID) {
    super();
    this.#env = env;
    this.#principal = principal;
    this.#projectId = projectId;
  }

  /** A handle on the stream at `path` (created by its first append). */
  get(path: unknown): StreamCapability {
    const streamPath = parseStreamPath(path);
    if (this.#projectId === DEPLOYMENT_PROJECT_ID && this.#principal.kind !== "admin") {
      throw new ItxError("NOT_FOUND", `no stream ${streamPath}`);
    }
    const stub = streamStub(this.#env.STREAM, coordinateName({ projectId: this.#projectId, path: streamPath }));
    return new StreamCapability(stub, { principal: this.#principal.id });
  }
}
installMissingMemberError(StreamCollection, "streams");
