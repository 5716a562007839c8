import { RpcSession, type RpcSessionOptions, type RpcTransportWithCustomEncoding } from "capnweb";
import { ItxError } from "iterate/errors";
import { HeldResults } from "./held-results.ts";
import { MessageBudget } from "./message-guard.ts";

/**
 * Serves one Cap'n Web HTTP batch: the request's lines are one session's messages, and the
 * response is every message the OS sends back once the calls the client pulled are answered.
 *
 * capnweb's own batch responder keeps results the client never pulled for as long as the batch
 * runs, unweighed, and gathers the response with no bound. Here every line passes the message
 * guard (a batch comes before authentication, so it is held to the unauthenticated budget), every
 * call is pulled as it arrives, and all the OS answers (the response, and the answers to calls the
 * client did not pull, which are weighed and left out of it) are held to
 * API_SESSION_HELD_RESULTS_MAX_CHARS. Past it the session ends with RESOURCE_EXHAUSTED.
 */
export async function serveBatch(lines: readonly string[], root: object, options: RpcSessionOptions): Promise<Response> {
  const transport = new BatchTransport(lines);
  const session = new RpcSession(transport, root, options);
  await transport.allReceived;
  await session.drain();
  transport.check();
  return new Response(transport.body());
}

// The server end of one batch, at capnweb's "jsonCompatible" level: messages come parsed (each
// line was parsed once, by the guard) and go out as JSON lines.
class BatchTransport implements RpcTransportWithCustomEncoding {
  readonly encodingLevel = "jsonCompatible";
  readonly #incoming: unknown[][] = [];
  /** Calls whose answers the client asked for (its own pulls); other answers are weighed, not sent. */
  readonly #clientPulls = new Set<number>();
  readonly #held = new HeldResults();
  readonly #outgoing: string[] = [];
  readonly #received = Promise.withResolvers<void>();
  #stalled: ((error: unknown) => void) | undefined;
  #error: unknown;

  constructor(lines: readonly string[]) {
    const budget = new MessageBudget(() => false);
    for (const line of lines) {
      const message = budget.take(line);
      if (message instanceof ItxError) throw message;
      this.#incoming.push(message);
      const [kind, id] = message;
      if (kind === "push") {
        const call = budget.lastCallId;
        this.#held.pushed(call);
        this.#incoming.push(["pull", call]);
      } else if (kind === "pull" && typeof id === "number") this.#clientPulls.add(id);
    }
  }

  /** Settles once capnweb has taken every message of the batch; rejects if the session ended first. */
  get allReceived(): Promise<void> {
    return this.#received.promise;
  }

  send(message: unknown): number {
    if (this.#error !== undefined) return 0;
    const text = JSON.stringify(message);
    const [kind, id] = Array.isArray(message) ? message : [];
    // Every answer counts, sent or not: a batch holds them all until it ends (no release frees one).
    const answer = (kind === "resolve" || kind === "reject") && typeof id === "number" && id > 0;
    const refused = answer && this.#held.holds(id) ? this.#held.answering(id, text.length) : this.#held.keeping(text.length);
    if (refused) {
      this.#end(refused);
      return 0;
    }
    if (!answer || this.#clientPulls.has(id)) this.#outgoing.push(text);
    return text.length;
  }

  receive(): Promise<unknown> {
    const next = this.#incoming.shift();
    if (next !== undefined) return Promise.resolve(next);
    if (this.#error !== undefined) return Promise.reject(this.#error);
    this.#received.resolve();
    // Nothing more comes; a stall here is how the transport ends the session later (`#end`).
    return new Promise((_resolve, reject) => {
      this.#stalled = reject;
    });
  }

  abort(reason: unknown): void {
    if (this.#error === undefined) this.#error = reason;
    this.#received.reject(reason);
  }

  /** Throws what ended the session, if the transport ended it (capnweb's drain may have settled first). */
  check(): void {
    if (this.#error !== undefined) throw this.#error;
  }

  body(): string {
    return this.#outgoing.join("\n");
  }

  #end(error: unknown): void {
    if (this.#error !== undefined) return;
    this.#error = error;
    this.#received.reject(error);
    this.#stalled?.(error);
  }
}
