import type { RpcTransportWithCustomEncoding } from "capnweb";
import { ItxError } from "iterate/errors";
import { HeldResults } from "./held-results.ts";
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
 *
 * Every call's answer is weighed (`HeldResults`): behind each push the transport hands capnweb a
 * pull of the same call, so capnweb sends the answer as soon as it is ready whether or not the
 * client asked for it. A client's own pull then finds the answer already on its way (capnweb
 * pulls an export once). capnweb's client takes an answer it did not pull like one it did: it
 * keeps the resolution and releases the call, so a pipelined handle resolves to its stub and a
 * call nobody awaits stops holding its result.
 */
export class GuardedWebSocketTransport implements RpcTransportWithCustomEncoding {
  readonly encodingLevel = "jsonCompatible";
  readonly #webSocket: WebSocket;
  readonly #budget: MessageBudget;
  readonly #held = new HeldResults();
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
    const text = JSON.stringify(message);
    if (Array.isArray(message) && (message[0] === "resolve" || message[0] === "reject") && typeof message[1] === "number") {
      const id = message[1];
      this.#budget.answered(id);
      const refused = this.#held.answering(id, text.length);
      if (refused) {
        this.#fail(refused);
        this.#close(CLOSE_POLICY, refused.message);
        return 0;
      }
    }
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
    this.#deliver(message);
    const [kind, id] = message;
    if (kind === "push") {
      // Pull every call at once, so its answer is weighed as soon as it is ready (see the class comment).
      const call = this.#budget.lastCallId;
      this.#held.pushed(call);
      this.#deliver(["pull", call]);
    } else if (kind === "release" && typeof id === "number") this.#held.released(id);
  }

  #deliver(message: unknown[]): void {
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
