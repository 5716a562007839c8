import { RpcTarget } from "capnweb";
import { ItxError } from "iterate/errors";
import { authenticate, type Handshake } from "../auth/authenticate.ts";
import { watchEnd } from "../auth/browser-session-registry.ts";
import { watchRevocation } from "../auth/token-registry.ts";
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
  // Set once an authentication succeeded (or is setting up its watches): a connection carries one session.
  #taken = false;

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
    const connection = this.#connection;
    this.#refuseSecondSession();
    const { principal, tokenId, browserSessionId, expiresAt } = await authenticate(this.#env, credentials, this.#handshake);
    // Checked again, and taken before the next await: two calls may have been under way at once.
    this.#refuseSecondSession();
    this.#taken = true;
    try {
      if (tokenId !== undefined && connection.transport === "websocket" && !connection.closed) {
        const stop = await watchRevocation(this.#env, tokenId, `session:${connection.id}`, () => connection.terminate("the bearer token was revoked"));
        connection.onClose(stop);
      }
      if (browserSessionId !== undefined && connection.transport === "websocket" && !connection.closed) {
        const stop = await watchEnd(this.#env, browserSessionId, `connection:${connection.id}`, () => connection.terminate("the browser session was signed out"));
        connection.onClose(stop);
      }
    } catch (error) {
      // No session was handed out: the connection may try again (a watch already made ends at close).
      this.#taken = false;
      throw error;
    }
    if (expiresAt !== undefined && connection.transport === "websocket" && !connection.closed) endAtExpiry(connection, expiresAt);
    connection.markAuthenticated();
    return new SessionRpcTarget(this.#env, connection, principal);
  }

  /**
   * A connection carries one session. Each authentication of a WebSocket watches its credential
   * until the connection closes, so a client that authenticated again and again on one socket
   * would grow that state (and the registry's watchers) without bound.
   */
  #refuseSecondSession(): void {
    if (!this.#taken) return;
    throw new ItxError("INVALID_ARGUMENT", "this connection is authenticated already: a connection carries one session; open another connection to authenticate again");
  }
}

/** The longest delay a timer takes (2^31 - 1 ms, about 24.8 days); longer ones fire at once. */
const TIMER_MAX_MS = 2_147_483_647;

/**
 * Ends a WebSocket session when its credential expires: a token's expiry or a browser session's
 * end holds for a connection that stays open, as it does for a new one.
 */
function endAtExpiry(connection: Connection, expiresAtSeconds: number): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    const left = expiresAtSeconds * 1000 - Date.now();
    if (left <= 0) {
      connection.terminate("the credential expired");
      return;
    }
    timer = setTimeout(arm, Math.min(left, TIMER_MAX_MS));
  };
  arm();
  connection.onClose(() => {
    if (timer !== undefined) clearTimeout(timer);
  });
}
