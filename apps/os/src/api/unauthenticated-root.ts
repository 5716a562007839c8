import { RpcTarget } from "capnweb";
import { authenticate, type Handshake } from "../auth/authenticate.ts";
import { watchEnd } from "../auth/browser-session-registry.ts";
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
  readonly #handshake: Handshake;

  constructor(env: Env, connection: Connection, handshake: Handshake = {}) {
    super();
    this.#env = env;
    this.#connection = connection;
    this.#handshake = handshake;
  }

  /**
   * Checks credentials once; answers a Session or fails with `UNAUTHENTICATED`. A session made with
   * a bearer token ends when the token is revoked; one made with the browser's session cookie
   * (`{ type: "session-cookie" }`) also ends at sign-out.
   */
  async authenticate(credentials: unknown): Promise<SessionRpcTarget> {
    const { principal, tokenId, browserSessionId } = await authenticate(this.#env, credentials, this.#handshake);
    const connection = this.#connection;
    if (tokenId !== undefined && connection.transport === "websocket" && !connection.closed) {
      const stop = await watchRevocation(this.#env, tokenId, `session:${connection.id}`, () => connection.terminate("the bearer token was revoked"));
      connection.onClose(stop);
    }
    if (browserSessionId !== undefined && connection.transport === "websocket" && !connection.closed) {
      const stop = await watchEnd(this.#env, browserSessionId, `connection:${connection.id}`, () => connection.terminate("the browser session was signed out"));
      connection.onClose(stop);
    }
    connection.markAuthenticated();
    return new SessionRpcTarget(this.#env, connection, principal);
  }
}
