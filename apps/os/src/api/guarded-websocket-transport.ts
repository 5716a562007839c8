import type { RpcTransportWithCustomEncoding } from "capnweb";
import { ItxError } from "iterate/errors";
import { MessageBudget } from "./message-guard.ts";

/** WebSocket close codes: 1008 policy violation, 1009 message too big (RFC 6455). */
const CLOSE_POLICY = 1008;
const CLOSE_TOO_BIG = 1009;

/**
 * capnweb's WebSocket transport with a gate in front: each frame passes MessageBudget before
 * capnweb sees it (capnweb's own limits are fixed per session; this one tightens before
 * authentication and relaxes after). A refused frame closes the socket with the coded reason.
 * The peer going away is an ordinary end: the transport rejects with a coded UNAVAILABLE, which
 * the OS does not log as an error.
 *
 * The gate has to parse each frame to check it, so the transport works at capnweb's
 * "jsonCompatible" level: it hands capnweb the parsed message, and writes capnweb's outgoing
 * messages as JSON itself. The wire is the same as capnweb's own WebSocket transport; each
 * incoming message is parsed once instead of twice.
 */
export class GuardedWebSocketTransport implements RpcTransportWithCustomEncoding {
  readonly encodingLevel = "jsonCompatible";
  readonly #webSocket: WebSocket;
  readonly #budget: MessageBudget;
  readonly #queue: unknown[][] = [];
  #waiting: { resolve: (message: unknown[]) => void; reject: (error: unknown) => void } | undefined;
  #error: unknown;

  constructor(webSocket: WebSocket, authenticated: () => boolean) {
    this.#webSocket = webSocket;
    this.#budget = new MessageBudget(authenticated);
    webSocket.addEventListener("message", (event) => this.#receive(event.data));
    webSocket.addEventListener("close", (event) => {
      this.#fail(new ItxError("UNAVAILABLE", `the client closed the connection (${event.code})`, { details: { reason: "client-disconnected" } }));
    });
    webSocket.addEventListener("error", () => {
      this.#fail(new ItxError("UNAVAILABLE", "the client connection failed", { details: { reason: "client-disconnected" } }));
    });
  }

  /** Writes one message; answers its length in characters, as capnweb counts a string transport's. */
  send(message: unknown): number {
    if (this.#error !== undefined) return 0;
    if (Array.isArray(message) && (message[0] === "resolve" || message[0] === "reject") && typeof message[1] === "number") this.#budget.answered(message[1]);
    const text = JSON.stringify(message);
    this.#webSocket.send(text);
    return text.length;
  }

  receive(): Promise<unknown[]> {
    const next = this.#queue.shift();
    if (next !== undefined) return Promise.resolve(next);
    if (this.#error !== undefined) return Promise.reject(this.#error);
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  abort(reason: unknown): void {
    this.#close(3000, reason instanceof Error ? reason.message : String(reason));
    if (this.#error === undefined) this.#error = reason;
  }

  #receive(data: unknown): void {
    if (this.#error !== undefined) return;
    const message = this.#budget.take(data);
    if (message instanceof ItxError) {
      const refused = message;
      // 1009 for what was too large; 1008 for anything else past a budget (a count, bad shape).
      const tooBig = refused.details?.limit === "API_MESSAGE_MAX_CHARS" || refused.details?.limit === "API_UNAUTHENTICATED_CHARS_MAX";
      this.#fail(refused);
      this.#close(tooBig ? CLOSE_TOO_BIG : CLOSE_POLICY, refused.message);
      return;
    }
    if (this.#waiting) {
      this.#waiting.resolve(message);
      this.#waiting = undefined;
    } else this.#queue.push(message);
  }

  #fail(error: unknown): void {
    if (this.#error !== undefined) return;
    this.#error = error;
    // Frames already admitted are still delivered; the rejection comes after them.
    if (this.#waiting) {
      this.#waiting.reject(error);
      this.#waiting = undefined;
    }
  }

  #close(code: number, reason: string): void {
    // A close reason is at most 123 bytes of UTF-8.
    let text = reason;
    while (new TextEncoder().encode(text).length > 123) text = text.slice(0, -1);
    try {
      this.#webSocket.close(code, text);
    } catch {
      // already closed
    }
  }
}
