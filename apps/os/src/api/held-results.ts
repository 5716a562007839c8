import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";

/**
 * The answers one Cap'n Web session holds for its client, counted in characters as they are sent.
 *
 * capnweb keeps each call's result (the export a client's push created) until the client releases
 * it. A well-behaved client releases as soon as the answer arrives; a hostile one never does, and
 * then the count of calls (`API_SESSION_OUTSTANDING_CALLS_MAX`) was the only bound, whatever each
 * result weighed. This ledger adds the weight: the characters of every answer sent for a call the
 * client has not released yet, held to `API_SESSION_HELD_RESULTS_MAX_CHARS`.
 *
 * The transport asks capnweb for every call's answer as soon as it is ready (it pulls each push
 * itself), so a result the client never pulled is weighed too instead of waiting unseen.
 */
export class HeldResults {
  /** Calls (push ids) the client has not released, with the characters of the answer sent for each (0 until it is sent). */
  readonly #held = new Map<number, number>();
  #chars = 0;

  /** The client made call `id` (a push): its result is held until the client releases it. */
  pushed(id: number): void {
    this.#held.set(id, 0);
  }

  /** The client released call `id`: capnweb lets its result go, and so does the ledger. */
  released(id: number): void {
    const chars = this.#held.get(id);
    if (chars === undefined) return;
    this.#held.delete(id);
    this.#chars -= chars;
  }

  /** Whether call `id` is one of the client's pushes it has not released. */
  holds(id: number): boolean {
    return this.#held.has(id);
  }

  /**
   * The OS is about to send the answer to call `id`, `chars` long. Answers the coded error that
   * ends the session when the held answers would pass the limit; a call the client already
   * released (or not a push of the client's) weighs nothing here, since capnweb no longer holds it.
   */
  answering(id: number, chars: number): ItxError<"RESOURCE_EXHAUSTED"> | undefined {
    // A negative id is a promise the OS exported inside an earlier answer: capnweb sends its
    // answer unasked and keeps it until the client releases that id, like a call's.
    const before = this.#held.get(id) ?? (id < 0 ? 0 : undefined);
    if (before === undefined) return undefined;
    const refused = this.#room(chars);
    if (refused) return refused;
    this.#held.set(id, before + chars);
    this.#chars += chars;
    return undefined;
  }

  /**
   * `chars` more are held that no release frees (an HTTP batch holds every message it sends until
   * the response goes out). Answers the coded error past the limit, like `answering`.
   */
  keeping(chars: number): ItxError<"RESOURCE_EXHAUSTED"> | undefined {
    const refused = this.#room(chars);
    if (refused) return refused;
    this.#chars += chars;
    return undefined;
  }

  #room(chars: number): ItxError<"RESOURCE_EXHAUSTED"> | undefined {
    if (this.#chars + chars <= LIMITS.API_SESSION_HELD_RESULTS_MAX_CHARS) return undefined;
    return new ItxError(
      "RESOURCE_EXHAUSTED",
      `a session holds at most ${LIMITS.API_SESSION_HELD_RESULTS_MAX_CHARS} characters of answers it has not released; this message is ${chars}, ${this.#chars} are held`,
      { details: limitDetails("API_SESSION_HELD_RESULTS_MAX_CHARS") },
    );
  }

  /** Characters of answers sent and not released yet. */
  get chars(): number {
    return this.#chars;
  }
}
