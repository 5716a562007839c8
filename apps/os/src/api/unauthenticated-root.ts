import { RpcTarget } from "capnweb";
import { authenticate } from "../auth/authenticate.ts";
import { watchRevocation } from "../auth/token-registry.ts";
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

  /**
   * Checks credentials once; answers a Session or fails with `UNAUTHENTICATED`. A session made with
   * a bearer token ends when the token is revoked.
   */
  async authenticate(credentials: unknown): Promise<SessionRpcTarget> {
    const { principal, tokenId } = await authenticate(this.#env, credentials);
    const connection = this.#connection;
    if (tokenId !== undefined && connection.transport === "websocket" && !connection.closed) {
      const stop = await watchRevocation(this.#env, tokenId, `session:${connection.id}`, () => connection.terminate("the bearer token was revoked"));
      connection.onClose(stop);
    }
    connection.markAuthenticated();
    return new SessionRpcTarget(this.#env, connection, principal);
  }
}
