import type { Handshake } from "./authenticated.ts";
import { isSameOrigin } from "./same-origin.ts";
import { readCookie } from "./session-cookie.ts";

/**
 * What a connection to /api may authenticate with besides its credentials. The session cookie
 * counts only when the handshake came from a page of this origin: a page of another site that
 * opens a WebSocket to /api gets no use of the visitor's cookie (cross-site WebSocket hijacking).
 */
export function handshakeOf(request: Request): Handshake {
  if (!isSameOrigin(request)) return {};
  const sessionCookie = readCookie(request);
  return sessionCookie === undefined ? {} : { sessionCookie };
}
