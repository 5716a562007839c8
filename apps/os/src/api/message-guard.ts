import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails, type LimitName } from "../limits.ts";

// Every Cap'n Web message from a client passes here before capnweb sees it: a frame that is too
// large, past the budget of a session that has not authenticated, or not a Cap'n Web message at
// all ends the session with INVALID_ARGUMENT instead of reaching capnweb's parser (whose failures
// are uncoded and would be logged as the OS's own bugs). Over the WebSocket, capnweb then takes
// the message as parsed here (`take`).

/** The message kinds of Cap'n Web 0.12 (capnweb's readLoop). */
const MESSAGE_KINDS: ReadonlySet<string> = new Set(["push", "stream", "pipe", "pull", "resolve", "reject", "release", "abort"]);

/** What one session has received so far; `authenticated` is read from its connection per message. */
export class MessageBudget {
  #messages = 0;
  #chars = 0;
  /**
   * Calls the client has made whose results the OS still holds (capnweb's exports, by positive
   * id): pushes and pipes until the client releases them, streams until the OS answers them.
   */
  #outstanding = 0;
  /** The positive id capnweb gives the next push, stream or pipe: they are numbered in arrival order from 1. */
  #nextExport = 1;
  /** Stream calls not answered yet: capnweb releases each by itself once its answer is sent (`answered`). */
  readonly #streams = new Set<number>();
  readonly #authenticated: () => boolean;

  constructor(authenticated: () => boolean) {
    this.#authenticated = authenticated;
  }

  /**
   * Checks one incoming message and counts it. Returns the coded error that ends the session, or
   * undefined when the message may go on to capnweb.
   */
  admit(message: unknown): ItxError<"INVALID_ARGUMENT" | "RESOURCE_EXHAUSTED"> | undefined {
    const taken = this.take(message);
    return taken instanceof ItxError ? taken : undefined;
  }

  /**
   * `admit` that also answers the message as parsed, for a transport that hands capnweb parsed
   * messages (its "jsonCompatible" encoding level), so each message is parsed once.
   */
  take(message: unknown): unknown[] | ItxError<"INVALID_ARGUMENT" | "RESOURCE_EXHAUSTED"> {
    if (typeof message !== "string") return refusal("a Cap'n Web message is a text frame");
    if (message.length > LIMITS.API_MESSAGE_MAX_CHARS) {
      return refusal(`a message is at most ${LIMITS.API_MESSAGE_MAX_CHARS} characters, got ${message.length}`, "API_MESSAGE_MAX_CHARS");
    }
    if (!this.#authenticated()) {
      this.#messages += 1;
      this.#chars += message.length;
      if (this.#messages > LIMITS.API_UNAUTHENTICATED_MESSAGES_MAX) {
        return refusal(`at most ${LIMITS.API_UNAUTHENTICATED_MESSAGES_MAX} messages before authenticate() succeeds`, "API_UNAUTHENTICATED_MESSAGES_MAX");
      }
      if (this.#chars > LIMITS.API_UNAUTHENTICATED_CHARS_MAX) {
        return refusal(`at most ${LIMITS.API_UNAUTHENTICATED_CHARS_MAX} characters before authenticate() succeeds`, "API_UNAUTHENTICATED_CHARS_MAX");
      }
    }
    const parsed = parse(message);
    if (parsed instanceof ItxError) return parsed;
    return this.#count(parsed) ?? parsed;
  }

  /** The id capnweb gives the last push, stream or pipe taken (0 before the first). */
  get lastCallId(): number {
    return this.#nextExport - 1;
  }

  /**
   * The OS sent its answer (resolve or reject) to the client's call `id`. A stream call is
   * released by capnweb itself once answered, so it stops counting here; a push or pipe counts
   * until the client releases it.
   */
  answered(id: number): void {
    if (this.#streams.delete(id)) this.#outstanding = Math.max(0, this.#outstanding - 1);
  }

  // Keeps the count of calls the client holds open: a push, stream or pipe adds one export on the
  // OS's side; a release of an export the client created (a positive id) takes its refcount away,
  // and a stream call's answer takes it away by itself (`answered`).
  #count(parsed: unknown[]): ItxError<"INVALID_ARGUMENT" | "RESOURCE_EXHAUSTED"> | undefined {
    const [kind, id, refcount] = parsed;
    if (kind === "push" || kind === "pipe" || kind === "stream") {
      if (kind === "stream") this.#streams.add(this.#nextExport);
      this.#nextExport += 1;
      this.#outstanding += 1;
    } else if (kind === "release") {
      // capnweb subtracts the count as given: a fraction would leave an export alive that the
      // count here no longer holds, so only whole counts of at least one are taken.
      if (typeof id !== "number" || !Number.isSafeInteger(id) || typeof refcount !== "number" || !Number.isSafeInteger(refcount) || refcount < 1) {
        return refusal("a release names an export by its integer id and releases a whole count of at least 1");
      }
      if (id > 0) {
        // A stream call the client releases itself is not answered-and-released again.
        if (this.#streams.delete(id)) this.#outstanding = Math.max(0, this.#outstanding - 1);
        else this.#outstanding = Math.max(0, this.#outstanding - refcount);
      }
    }
    if (this.#outstanding > LIMITS.API_SESSION_OUTSTANDING_CALLS_MAX) {
      return new ItxError(
        "RESOURCE_EXHAUSTED",
        `a session holds at most ${LIMITS.API_SESSION_OUTSTANDING_CALLS_MAX} calls whose results it has not released; release results (dispose what you no longer need) or open another session`,
        { details: limitDetails("API_SESSION_OUTSTANDING_CALLS_MAX") },
      );
    }
    return undefined;
  }
}

// A message is a JSON array whose first element names its kind. The WebSocket transport hands
// this parse to capnweb (`take`); the HTTP batch route passes the lines on, and capnweb parses them again.
function parse(message: string): unknown[] | ItxError<"INVALID_ARGUMENT"> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return refusal("a Cap'n Web message must be JSON");
  }
  if (!Array.isArray(parsed) || typeof parsed[0] !== "string" || !MESSAGE_KINDS.has(parsed[0])) {
    return refusal("a Cap'n Web message is a JSON array that starts with its kind (push, pull, resolve, reject, release, ...)");
  }
  return parsed;
}

function refusal(message: string, limit?: LimitName): ItxError<"INVALID_ARGUMENT"> {
  return new ItxError("INVALID_ARGUMENT", message, limit === undefined ? undefined : { details: limitDetails(limit) });
}
