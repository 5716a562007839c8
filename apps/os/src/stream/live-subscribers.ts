import type { StreamEvent } from "iterate/types";

/** A callback a client passed over RPC; it receives ordered batches. */
export type BatchCallback = ((events: StreamEvent[]) => unknown) & Partial<Disposable> & { dup?: () => BatchCallback };

/** How a live subscriber reads history it has not seen yet. */
export interface HistoryReader {
  head(): number;
  read(after: number, before: number, limit: number): StreamEvent[];
}

const REPLAY_BATCH = 500;

/**
 * One live subscriber: replays durable history after its cursor, then tails. Ephemeral events are
 * queued at the position they were sent and delivered in order with the durable ones. Every send
 * waits for the previous one, so a subscriber sees a gapless, ordered sequence.
 */
export class LiveSubscriber {
  readonly key: string;
  #cursor: number;
  #callback: BatchCallback;
  #types: ReadonlySet<string> | undefined;
  #ephemeral: StreamEvent[] = [];
  #pumping: Promise<void> | undefined;
  #closed = false;
  readonly #onFailure: (subscriber: LiveSubscriber, error: unknown) => void;

  constructor(options: {
    key: string;
    afterOffset: number;
    callback: BatchCallback;
    types?: readonly string[];
    onFailure: (subscriber: LiveSubscriber, error: unknown) => void;
  }) {
    this.key = options.key;
    this.#cursor = options.afterOffset;
    this.#callback = options.callback;
    this.#types = options.types && options.types.length > 0 ? new Set(options.types) : undefined;
    this.#onFailure = options.onFailure;
  }

  get cursor(): number {
    return this.#cursor;
  }

  /** Queues an ephemeral event; it goes out after every durable event up to its offset. */
  pushEphemeral(event: StreamEvent): void {
    if (this.#closed) return;
    if (this.#types && !this.#types.has(event.type)) return;
    this.#ephemeral.push(event);
  }

  /** Sends whatever is pending. Safe to call often: one pump runs at a time. */
  pump(history: HistoryReader): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#pumping) return this.#pumping;
    this.#pumping = this.#drain(history).finally(() => {
      this.#pumping = undefined;
    });
    return this.#pumping;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#ephemeral = [];
    try {
      this.#callback[Symbol.dispose]?.();
    } catch {
      // the client may already be gone
    }
  }

  async #drain(history: HistoryReader): Promise<void> {
    while (!this.#closed) {
      const nextEphemeral = this.#ephemeral[0];
      const until = nextEphemeral ? nextEphemeral.offset : history.head();
      if (this.#cursor < until) {
        const batch = history.read(this.#cursor, until + 1, REPLAY_BATCH);
        const last = batch.at(-1);
        if (!last) break;
        const visible = this.#types ? batch.filter((event) => this.#types?.has(event.type)) : batch;
        if (visible.length > 0 && !(await this.#send(visible))) return;
        this.#cursor = last.offset;
        continue;
      }
      if (nextEphemeral) {
        const due: StreamEvent[] = [];
        while (this.#ephemeral[0] && this.#ephemeral[0].offset <= this.#cursor) due.push(this.#ephemeral.shift() as StreamEvent);
        if (!(await this.#send(due))) return;
        continue;
      }
      break;
    }
  }

  async #send(events: StreamEvent[]): Promise<boolean> {
    try {
      await this.#callback(events);
      return true;
    } catch (error) {
      this.#onFailure(this, error);
      this.close();
      return false;
    }
  }
}
