import type { StreamEvent } from "iterate/types";
import { LIMITS } from "../limits.ts";
import { raceDeadline } from "../limits/deadline.ts";

/** Where a hosted processor lives: a Durable Object namespace binding, the object's name, the slug. */
export interface ProcessorSubscription {
  type: "processor";
  binding: string;
  host: string;
  processor: string;
}

/** What a processor host answers when woken: its committed checkpoint and where to send batches. */
export interface ProcessorSession {
  checkpoint: number;
  /** `head`: the stream's head when the batch was read, so the host need not ask for it. */
  processEventBatch: ((events: StreamEvent[], head: number) => Promise<{ offset: number }>) & Partial<Disposable>;
  /** Ends an idle session when the host can do without it (true); hosts that predate it never are. */
  release?: ((() => Promise<boolean>) & Partial<Disposable>) | undefined;
}

/** What an attempt to release an idle session came to. */
export type ReleaseOutcome = "released" | "kept" | "none";

const DELIVERY_BATCH = 500;
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 60_000;

/**
 * Delivers a stream's durable events to one hosted processor, at least once and in order. The
 * host, not the stream, owns the cursor: each batch answers the offset the host committed, and a
 * fresh wake answers its checkpoint, so a host that died resumes exactly where its fold stopped.
 */
export class HostedDelivery {
  readonly key: string;
  readonly subscription: ProcessorSubscription;
  #session: ProcessorSession | undefined;
  #cursor = 0;
  #pumping: Promise<void> | undefined;
  #failures = 0;
  #retryAt = 0;
  #lastError: string | undefined;
  // When the last batch was sent (or the session opened), and a release under way.
  #usedAt = 0;
  #releasing: Promise<ReleaseOutcome> | undefined;

  constructor(key: string, subscription: ProcessorSubscription) {
    this.key = key;
    this.subscription = subscription;
  }

  /** When the next retry is due (0 when none is pending). */
  get retryAt(): number {
    return this.#retryAt;
  }

  status(): { key: string; subscription: ProcessorSubscription; cursor: number; failures: number; lastError?: string } {
    return {
      key: this.key,
      subscription: this.subscription,
      cursor: this.#cursor,
      failures: this.#failures,
      ...(this.#lastError === undefined ? {} : { lastError: this.#lastError }),
    };
  }

  /** Sends every event after the host's cursor. One pump runs at a time. */
  pump(options: {
    head: () => number;
    read: (after: number, limit: number) => StreamEvent[];
    wake: () => Promise<ProcessorSession>;
    now: () => number;
  }): Promise<void> {
    if (this.#pumping) return this.#pumping;
    this.#pumping = this.#drain(options).finally(() => {
      this.#pumping = undefined;
    });
    return this.#pumping;
  }

  /** Forgets the live session (the subscription changed, or the stream is shutting down). */
  close(): void {
    const session = this.#session;
    this.#session = undefined;
    for (const stub of [session?.processEventBatch, session?.release]) {
      try {
        stub?.[Symbol.dispose]?.();
      } catch {
        // the host may be gone already
      }
    }
  }

  /**
   * Ends the session when nothing was sent for `idleMs` and the host agrees, so that neither object
   * keeps the other in memory: "released", "kept" (busy, recently used, or the host refused or
   * cannot), or "none" (no session). The next pump wakes the host again, from its checkpoint. A
   * host that does not answer within `waitMs` (DELIVERY_RELEASE_WAIT_MS) is treated as gone.
   */
  release(now: number, idleMs: number, waitMs: number = LIMITS.DELIVERY_RELEASE_WAIT_MS): Promise<ReleaseOutcome> {
    this.#releasing ??= this.#release(now, idleMs, waitMs).finally(() => {
      this.#releasing = undefined;
    });
    return this.#releasing;
  }

  async #release(now: number, idleMs: number, waitMs: number): Promise<ReleaseOutcome> {
    const session = this.#session;
    if (!session) return "none";
    if (this.#pumping || !session.release || now - this.#usedAt < idleMs) return "kept";
    let released: boolean;
    try {
      const answer = await raceDeadline(session.release(), waitMs, () => "unanswered" as const);
      // Unanswered: the session is dropped like a dead one (pumps wait for this release to settle).
      released = answer === true || answer === "unanswered";
    } catch {
      // The host is gone (restarted, evicted): the session is dead either way.
      released = true;
    }
    if (!released || this.#session !== session) return "kept";
    this.close();
    return "released";
  }

  /** Whether a session is open that its host could release (hosts that predate release cannot). */
  get releasable(): boolean {
    return this.#session?.release !== undefined;
  }

  async #drain(options: Parameters<HostedDelivery["pump"]>[0]): Promise<void> {
    try {
      // A release under way settles first: its session is either kept or gone.
      await this.#releasing;
      if (!this.#session) {
        const session = await options.wake();
        this.#session = session;
        this.#cursor = session.checkpoint;
      }
      this.#usedAt = options.now();
      while (this.#cursor < options.head()) {
        const batch = options.read(this.#cursor, DELIVERY_BATCH);
        const last = batch.at(-1);
        if (!last) break;
        // Read in the same synchronous step as the batch: the head the batch was read at.
        const { offset } = await this.#session.processEventBatch(batch, options.head());
        if (offset < last.offset) throw new Error(`host committed ${offset}, short of ${last.offset}`);
        this.#cursor = offset;
        this.#usedAt = options.now();
      }
      this.#failures = 0;
      this.#retryAt = 0;
      this.#lastError = undefined;
    } catch (error) {
      // Whatever failed (the host restarted, its fold threw), start over from its checkpoint later.
      this.close();
      this.#failures += 1;
      this.#lastError = error instanceof Error ? error.message : String(error);
      this.#retryAt = options.now() + Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(this.#failures - 1, 10));
    }
  }
}
