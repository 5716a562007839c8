import type { Principal } from "iterate/types";

/** Who authenticated, and with which bearer token (its id) when it was one. */
export interface Authenticated {
  principal: Principal;
  tokenId?: string;
  /** The bearer token's expiry (epoch seconds), when it was one. */
  tokenExpiresAt?: number;
  /** The browser session, when the cookie lane authenticated. */
  browserSessionId?: string;
  /** When the credential stops being valid (epoch seconds): a token's expiry, a browser session's end. */
  expiresAt?: number;
}

/** What the connection's handshake carried besides the credentials: the browser's session cookie. */
export interface Handshake {
  /** The session cookie's value, only when the handshake came from a page of this origin. */
  sessionCookie?: string;
}
