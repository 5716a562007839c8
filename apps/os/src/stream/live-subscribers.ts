import type { StreamEvent } from "iterate/types";
import { ItxError } from "iterate/errors";
import { utf8ByteLength } from "iterate/stream/events";
import { LIMITS, limitDetails } from "../limits.ts";

/** A callback a client passed over RPC; it receives ordered batches. */
export type BatchCallback = ((events: StreamEvent[]) => unknown) & Partial<Disposable> & { dup?: () => BatchCallback };

/** How a live subscriber reads history it has not seen yet. */
export interface HistoryReader {
  head(): number;
  read(after: number, before: number, limit: number): StreamEvent[];
}

const REPLAY_BATCH = 500;

// One ephemeral event goes to every live subscriber as the same object: it is measured once.
const ephemeralBytes = new WeakMap<StreamEvent, number>();

function bytesOfEphemeral(event: StreamEvent): number {
  let bytes = ephemeralBytes.get(event);
  if (bytes === undefined) {
    bytes = utf8ByteLength(JSON.stringify(event));
    ephemeralBytes.set(event, bytes);
  }
  return bytes;
}

// Ephemeral events waiting behind live subscribers of every stream this isolate holds. Locally
// every stream of every project shares one process: the per-subscriber bounds alone let stuck
// subscribers with distinct type filters on many streams hold memory without end. An event goes
// to all of a stream's subscribers as one object, so it is counted once however many hold it
// (counting it per holder let one stream's 256 subscribers of the same events look like 256
// times the memory, and close other projects' subscribers for it).
let queuedEverywhere = 0;
const holders = new WeakMap<StreamEvent, number>();
// The subscribers with events waiting. Held strongly, so their events are always let go through
// them: a subscriber whose stream object was dropped is found by `orphaned` and abandoned.
const queuing = new Set<LiveSubscriber>();

/** Bytes of distinct ephemeral events queued behind live subscribers in this isolate (tests). */
export function ephemeralBytesQueued(): number {
  return queuedEverywhere;
}

/** Bytes `event` adds to the isolate's count if one more subscriber queues it: none if another already does. */
function bytesAdded(event: StreamEvent): number {
  return (holders.get(event) ?? 0) === 0 ? bytesOfEphemeral(event) : 0;
}

function hold(event: StreamEvent): void {
  const count = holders.get(event) ?? 0;
  if (count === 0) queuedEverywhere += bytesOfEphemeral(event);
  holders.set(event, count + 1);
}

function release(event: StreamEvent): void {
  const count = holders.get(event) ?? 0;
  if (count <= 1) {
    holders.delete(event);
    if (count === 1) queuedEverywhere -= bytesOfEphemeral(event);
  } else holders.set(event, count - 1);
}

/**
 * The subscriber, of those with ephemeral events waiting in this isolate, whose queue is the
 * largest. Subscribers whose stream object was dropped are abandoned on the way.
 */
function largestQueue(now: number): LiveSubscriber | undefined {
  let largest: LiveSubscriber | undefined;
  for (const subscriber of queuing) {
    if (subscriber.orphaned(now)) {
      subscriber.abandon();
      continue;
    }
    if (!largest || subscriber.queuedBytes > largest.queuedBytes) largest = subscriber;
  }
  return largest;
}

/**
 * One live subscriber: replays durable history after its cursor, then tails. Ephemeral events are
 * queued at the position they were sent and delivered in order with the durable ones. Every send
 * waits for the previous one, so a subscriber sees a gapless, ordered sequence.
 *
 * Only ephemeral events wait in memory: durable ones are read from the journal a batch at a time,
 * each once the send before it is answered. A subscriber that falls behind by more ephemeral
 * events than LIVE_SUBSCRIBER_EPHEMERAL_MAX_EVENTS or _BYTES, or whose callback takes longer than
 * LIVE_SUBSCRIBER_CALLBACK_TIMEOUT_MS to answer a batch, is closed as one whose callback threw.
 * When the isolate's subscribers together would hold more than LIVE_EPHEMERAL_QUEUED_MAX_BYTES,
 * the ones holding the most are closed the same way until the new event fits.
 */
export class LiveSubscriber {
  readonly key: string;
  #cursor: number;
  #callback: BatchCallback;
  #types: ReadonlySet<string> | undefined;
  #ephemeral: StreamEvent[] = [];
  #ephemeralBytes = 0;
  #pumping: Promise<void> | undefined;
  #closed = false;
  #letGoOf = false;
  /** When a send last began or was answered, or the queue last became non-empty. */
  #activeAt = 0;
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

  /**
   * Queues an ephemeral event; it goes out after every durable event up to its offset. One that
   * would put the queue past its bounds closes the subscriber instead (an empty queue takes any).
   */
  pushEphemeral(event: StreamEvent): void {
    if (this.#closed) return;
    if (this.#types && !this.#types.has(event.type)) return;
    const bytes = bytesOfEphemeral(event);
    if (this.#ephemeral.length >= LIMITS.LIVE_SUBSCRIBER_EPHEMERAL_MAX_EVENTS) {
      this.#fail(new ItxError("RESOURCE_EXHAUSTED", `a live subscriber falls behind by at most ${LIMITS.LIVE_SUBSCRIBER_EPHEMERAL_MAX_EVENTS} ephemeral events`, {
        details: limitDetails("LIVE_SUBSCRIBER_EPHEMERAL_MAX_EVENTS"),
      }));
      return;
    }
    if (this.#ephemeral.length > 0 && this.#ephemeralBytes + bytes > LIMITS.LIVE_SUBSCRIBER_EPHEMERAL_MAX_BYTES) {
      this.#fail(new ItxError("RESOURCE_EXHAUSTED", `a live subscriber falls behind by at most ${LIMITS.LIVE_SUBSCRIBER_EPHEMERAL_MAX_BYTES} bytes of ephemeral events`, {
        details: limitDetails("LIVE_SUBSCRIBER_EPHEMERAL_MAX_BYTES"),
      }));
      return;
    }
    while (queuedEverywhere + bytesAdded(event) > LIMITS.LIVE_EPHEMERAL_QUEUED_MAX_BYTES) {
      const largest = largestQueue(Date.now());
      // Abandoning dropped streams' subscribers may have made room; nothing queued anywhere: an
      // event alone is within an append's own bounds.
      if (!largest || queuedEverywhere + bytesAdded(event) <= LIMITS.LIVE_EPHEMERAL_QUEUED_MAX_BYTES) break;
      largest.#fail(new ItxError("RESOURCE_EXHAUSTED", `live subscribers of this OS hold at most ${LIMITS.LIVE_EPHEMERAL_QUEUED_MAX_BYTES} bytes of ephemeral events, and this one's queue was the largest`, {
        details: limitDetails("LIVE_EPHEMERAL_QUEUED_MAX_BYTES"),
      }));
      if (largest === this) return;
    }
    if (this.#ephemeral.length === 0) this.#activeAt = Date.now();
    this.#ephemeral.push(event);
    this.#ephemeralBytes += bytes;
    hold(event);
    queuing.add(this);
  }

  /** UTF-8 bytes of the ephemeral events waiting behind this subscriber. */
  get queuedBytes(): number {
    return this.#ephemeralBytes;
  }

  /**
   * Whether this subscriber's stream is gone: events have waited here, with no send begun or
   * answered, for twice the deadline its stream puts on every send. A stream that still exists
   * closes a subscriber whose send is late; only a dropped stream object leaves one like this.
   */
  orphaned(now: number): boolean {
    return this.#ephemeral.length > 0 && now - this.#activeAt > 2 * LIMITS.LIVE_SUBSCRIBER_CALLBACK_TIMEOUT_MS;
  }

  /** Ends this subscriber as one whose send ran past its deadline: its stream is gone (`largestQueue`). */
  abandon(): void {
    const ms = LIMITS.LIVE_SUBSCRIBER_CALLBACK_TIMEOUT_MS;
    this.#fail(new ItxError("TIMEOUT", `a live subscriber's callback answers a batch within ${ms} ms`, { details: { ...limitDetails("LIVE_SUBSCRIBER_CALLBACK_TIMEOUT_MS"), timeoutMs: ms } }));
  }

  // Lets go of every event waiting here (the isolate's count follows).
  #dropQueue(): void {
    for (const event of this.#ephemeral) release(event);
    this.#ephemeral = [];
    this.#ephemeralBytes = 0;
    queuing.delete(this);
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
    this.#dropQueue();
    this.#letGo();
  }

  // Lets go of the client's callback. Closed by another stream of this isolate (the isolate-wide
  // bound), the callback is not ours to touch from there: workerd refuses I/O on another object's
  // behalf, so the send in flight lets go of it once it settles.
  #letGo(): void {
    if (this.#letGoOf) return;
    try {
      this.#callback[Symbol.dispose]?.();
      this.#letGoOf = true;
    } catch {
      // the client may already be gone, or this is another object's context
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
        while (this.#ephemeral[0] && this.#ephemeral[0].offset <= this.#cursor) {
          const event = this.#ephemeral.shift() as StreamEvent;
          this.#ephemeralBytes -= bytesOfEphemeral(event);
          release(event);
          due.push(event);
        }
        if (this.#ephemeral.length === 0) queuing.delete(this);
        if (!(await this.#send(due))) return;
        continue;
      }
      break;
    }
  }

  /** Calls the callback with `events`; answers whether the subscriber is still open after it. */
  async #send(events: StreamEvent[]): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const ms = LIMITS.LIVE_SUBSCRIBER_CALLBACK_TIMEOUT_MS;
        reject(new ItxError("TIMEOUT", `a live subscriber's callback answers a batch within ${ms} ms`, { details: { ...limitDetails("LIVE_SUBSCRIBER_CALLBACK_TIMEOUT_MS"), timeoutMs: ms } }));
      }, LIMITS.LIVE_SUBSCRIBER_CALLBACK_TIMEOUT_MS);
    });
    this.#activeAt = Date.now();
    try {
      await Promise.race([this.#callback(events), deadline]);
      return !this.#closed;
    } catch (error) {
      this.#fail(error);
      return false;
    } finally {
      this.#activeAt = Date.now();
      if (timer !== undefined) clearTimeout(timer);
      if (this.#closed) this.#letGo();
    }
  }

  // Ends the subscription as a failing callback does: its owner forgets it, its callback is let go.
  #fail(error: unknown): void {
    if (this.#closed) return;
    this.#onFailure(this, error);
    this.close();
  }
}
