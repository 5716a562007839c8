import { LIMITS, type LimitName } from "../limits.ts";

/**
 * Counts the live reads (long-polls and SSE responses) one Worker isolate is holding open, in all
 * and per caller. Each stream keeps at most STREAMS_HTTP_LIVE_WAITERS_MAX of them, but a caller
 * could spread them over many streams; the isolate's bound is shared by every project, so one
 * caller may hold only its share of it, and the rest stay for everyone else.
 */
export class LiveRequestGate {
  readonly #max: number;
  readonly #perCallerMax: number;
  readonly #byCaller = new Map<string, number>();
  #open = 0;
  #refusal: LimitName | undefined;

  constructor(max: number, perCallerMax: number) {
    this.#max = max;
    this.#perCallerMax = perCallerMax;
  }

  /** Takes a slot for `caller` (a principal id); false when the isolate's or the caller's are all held (the route answers 503). */
  enter(caller: string): boolean {
    const held = this.#byCaller.get(caller) ?? 0;
    if (held >= this.#perCallerMax) {
      this.#refusal = "STREAMS_HTTP_LIVE_REQUESTS_PER_CALLER_MAX";
      return false;
    }
    if (this.#open >= this.#max) {
      this.#refusal = "STREAMS_HTTP_LIVE_REQUESTS_MAX";
      return false;
    }
    this.#byCaller.set(caller, held + 1);
    this.#open += 1;
    return true;
  }

  /** Gives back a slot `enter` took for `caller`. */
  leave(caller: string): void {
    const held = this.#byCaller.get(caller) ?? 0;
    if (held === 0) return;
    if (held === 1) this.#byCaller.delete(caller);
    else this.#byCaller.set(caller, held - 1);
    this.#open -= 1;
  }

  get open(): number {
    return this.#open;
  }

  /** The limit the last refused `enter` met. */
  get refusal(): LimitName | undefined {
    return this.#refusal;
  }
}

/** The isolate's gate for /streams (STREAMS_HTTP_LIVE_REQUESTS_MAX, STREAMS_HTTP_LIVE_REQUESTS_PER_CALLER_MAX per principal). */
export const LIVE_REQUESTS = new LiveRequestGate(LIMITS.STREAMS_HTTP_LIVE_REQUESTS_MAX, LIMITS.STREAMS_HTTP_LIVE_REQUESTS_PER_CALLER_MAX);
