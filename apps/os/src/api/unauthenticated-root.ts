import { RpcTarget } from "capnweb";
import { authenticate } from "../auth/authenticate.ts";
import type { Env } from "../env.ts";
import type { Connection } from "./connection.ts";
import { SessionRpcTarget } from "./session.ts";

/**
 * What /api exposes before authentication. It has exactly one method: no describe, no ping, no
 * other property. Authority is only ever handed back by `authenticate`.
 */
export class UnauthenticatedRootRpcTarget extends RpcTarget {
  readonly #env: Env;
  readonly #connection: Connection;

  constructor(env: Env, connection: Connection) {
    super();
    this.#env = env;
    this.#connection = connection;
  }

  /** Checks credentials once; answers a Session or fails with `UNAUTHENTICATED`. */
  async authenticate(credentials: unknown): Promise<SessionRpcTarget> {
    const principal = await authenticate(this.#env, credentials);
    this.#connection.markAuthenticated();
    return new SessionRpcTarget(this.#env, this.#connection, principal);
  }
}
