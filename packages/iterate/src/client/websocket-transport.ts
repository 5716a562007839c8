import { WebSocketTransport, type RpcTransport } from "capnweb";
import { ItxError } from "../errors/index.ts";

/** The Node major version the client needs: the first with a global `WebSocket`. */
export const MINIMUM_NODE_MAJOR = 22;

/**
 * Fails with a sentence a person can act on when this runtime has no `WebSocket` (Node before 22),
 * instead of the `WebSocket is not defined` a bare reference would throw.
 */
export function requireWebSocket(): void {
  if (typeof globalThis.WebSocket === "function") return;
  const node = typeof process === "object" ? process.versions?.node : undefined;
  throw new ItxError(
    "UNAVAILABLE",
    `iterate needs Node ${MINIMUM_NODE_MAJOR} or later${node ? ` (this is Node ${node})` : ""}: it uses the built-in WebSocket`,
    { details: { reason: "runtime-too-old" } },
  );
}

/**
 * The close code the OS uses when it ends a session itself: the credential it was opened with was
 * revoked, or the browser session was signed out (apps/os/src/api/api-route.ts).
 */
export const SESSION_ENDED_CLOSE_CODE = 4001;

/**
 * Cap'n Web's WebSocket transport with errors that say where: a connection that never opened
 * fails every call with UNAVAILABLE naming the OS's URL (`reason: "unreachable"`), one the OS
 * ended (close code 4001: signed out, token revoked) is UNAUTHENTICATED with `reason: "revoked"`
 * and the OS's words, and one that closed otherwise names the URL and the close code
 * (`reason: "connection-closed"`). Cap'n Web alone answers all three with a bare message naming
 * nothing, and every stub of the session breaks with that error (`onRpcBroken`).
 */
export class ItxWebSocketTransport implements RpcTransport {
  readonly #inner: WebSocketTransport;
  readonly #baseUrl: string;
  #opened = false;

  constructor(webSocket: WebSocket, baseUrl: string) {
    this.#inner = new WebSocketTransport(webSocket);
    this.#baseUrl = baseUrl;
    if (webSocket.readyState === WebSocket.OPEN) this.#opened = true;
    else webSocket.addEventListener("open", () => (this.#opened = true), { once: true });
  }

  send(message: string): void | Promise<void> {
    return this.#inner.send(message);
  }

  async receive(): Promise<string> {
    try {
      return (await this.#inner.receive()) as string;
    } catch (error) {
      throw this.#explain(error);
    }
  }

  // oxlint-disable-next-line typescript/no-explicit-any -- capnweb's RpcTransport declares `reason: any`
  abort(reason: any): void {
    this.#inner.abort(reason);
  }

  #explain(error: unknown): unknown {
    if (error instanceof ItxError) return error;
    const message = error instanceof Error ? error.message : String(error);
    if (!this.#opened) {
      return new ItxError("UNAVAILABLE", `no iterate OS answers at ${this.#baseUrl} (${message.replace(/\.$/, "")})`, {
        cause: error,
        details: { reason: "unreachable", url: this.#baseUrl },
      });
    }
    const ended = /^Peer closed WebSocket: (\d+) ?(.*)$/s.exec(message);
    if (ended !== null && Number(ended[1]) === SESSION_ENDED_CLOSE_CODE) {
      return new ItxError("UNAUTHENTICATED", `the OS at ${this.#baseUrl} ended this session: ${ended[2]?.trim() || "its credential is no longer valid"}`, {
        cause: error,
        details: { reason: "revoked", url: this.#baseUrl },
      });
    }
    if (message.startsWith("Peer closed WebSocket")) {
      return new ItxError("UNAVAILABLE", `the connection to ${this.#baseUrl} closed (${message.trim()})`, {
        cause: error,
        details: { reason: "connection-closed", url: this.#baseUrl },
      });
    }
    return error;
  }
}
