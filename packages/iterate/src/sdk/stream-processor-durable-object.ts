import { DurableObject } from "cloudflare:workers";
import { ItxError } from "../errors/index.ts";
import type { EventInput, ProcessorSnapshot, StreamEvent } from "../types.ts";
import { ProcessorEngine } from "../stream/processor/engine.ts";
import { checkpointKey, type ProcessorStorage, type ProcessorStream } from "../stream/processor/host.ts";

import type { AnyStreamProcessor } from "../stream/processor/stream-processor.ts";

/** Where a host remembers which stream its checkpoint folds. */
const FOLDED_STREAM_KEY = "processor-host/stream";

/**
 * How soon after background work is claimed the host's alarm checks on it: should the host die
 * with the work under way, the alarm brings up the next incarnation, which drives it again.
 */
export const REVIVAL_CHECK_MS = 5_000;

/** The Stream capability a host is handed when a stream wakes it. */
export interface HostedStream {
  getEvents(input: { afterOffset: number; limit: number }): Promise<StreamEvent[]>;
  head(): Promise<number>;
  append(...events: EventInput[]): Promise<StreamEvent[]>;
  dup?(): HostedStream;
}

/** What `wakeStreamProcessor` answers: the committed checkpoint and where to send batches. */
export interface WokenProcessor {
  checkpoint: number;
  /** `head`: the stream's head when it read the batch, so the host need not ask (older streams omit it). */
  processEventBatch(events: StreamEvent[], head?: number): Promise<{ offset: number }>;
  /**
   * The stream is done with this session for now (it has been idle): the host lets go of the stream
   * capability it was handed, so that neither object holds the other in memory and both may be
   * evicted. Answers false when the host still needs it (work in flight, state only this
   * incarnation has); the stream then keeps the session. Older hosts lack it and are never released.
   */
  release?(): boolean;
}

/**
 * A Durable Object that hosts one stream processor. A stream subscribed to it (by an
 * `itx/subscription-configured` event naming this object's binding and name) wakes it with
 * `wakeStreamProcessor`, gets its checkpoint, and sends it ordered batches after that; the host
 * folds them and commits its checkpoint in its own storage. Delivery is at least once, the fold
 * exactly once.
 *
 * @example
 * export class HoarderDurableObject extends StreamProcessorDurableObject {
 *   processor = new Hoarder();
 * }
 */
export abstract class StreamProcessorDurableObject<Env = unknown> extends DurableObject<Env> {
  /** The processor this object hosts. */
  abstract readonly processor: AnyStreamProcessor;

  // One engine per incarnation: a second wake only swaps the stream it reads through, so work
  // this engine started in the background is not mistaken for work a dead host left behind.
  #engine: ProcessorEngine | undefined;
  /** The engine's first catch-up: a snapshot taken while it runs would miss what it is folding. */
  #starting: Promise<unknown> | undefined;
  #stream: HostedStream | undefined;
  /** True while this incarnation has an alarm standing for its claims (or one at least as early). */
  #revivalArmed = false;

  /**
   * Called by a stream, which names itself by its coordinate. Catches up from the checkpoint, then
   * answers where the stream should continue. A wake from a stream this host does not fold is
   * refused, so a subscription row can never make a host fold someone else's events.
   */
  async wakeStreamProcessor(input: { name: string; stream: HostedStream; coordinate: string }): Promise<WokenProcessor> {
    const slug = this.processor.contract.slug;
    if (input.name !== slug) throw new ItxError("NOT_FOUND", `this host runs processor ${slug}, not ${input.name}`);
    if (typeof input.coordinate !== "string" || !this.acceptsStream(input.coordinate)) {
      throw new ItxError("NOT_FOUND", `this host does not fold the stream ${String(input.coordinate)}`);
    }
    // Parameters are released when this call returns: keep our own reference to the stream.
    const previous = this.#stream;
    const handed = input.stream.dup ? input.stream.dup() : input.stream;
    this.#stream = handed;
    disposeQuietly(previous);
    let engine = this.#engine;
    let outcomes;
    if (engine) {
      outcomes = await engine.catchUp();
    } else {
      await this.#foldOnly(input.coordinate);
      engine = new ProcessorEngine({
        stream: this.#currentStream(),
        storage: this.ctx.storage as unknown as ProcessorStorage,
        processors: [this.processor],
        onClaim: () => this.#armRevival(),
      });
      this.#engine = engine;
      const starting = engine.start();
      this.#starting = starting.catch(() => undefined);
      outcomes = (await starting).outcomes;
    }
    const failed = outcomes.find((outcome) => outcome.status === "failed");
    if (failed?.status === "failed") throw failed.error;
    await this.#scheduleRevival();
    return {
      checkpoint: (await engine.snapshot(slug)).offset,
      processEventBatch: (events: StreamEvent[], head?: number) => this.#processEventBatch(events, head),
      release: () => this.#release(handed),
    };
  }

  /**
   * A stream capability this host opens on its own, for a host that can (the platform's hosts: their
   * own coordinate through the STREAM binding, with the authority they wake themselves with). Only
   * such a host lets go of a stream's handed capability when that stream's session idles out: its
   * engine then reads and appends through a fresh one of these each time. Undefined by default.
   */
  protected openStream(): HostedStream | undefined {
    return undefined;
  }

  /**
   * The stream capability the host wakes itself with when its alarm finds it asleep (a restart
   * ended the incarnation that claimed background work, and no stream has woken it since). By
   * default `openStream()`; a host that opens no stream of its own for reading, but may append as
   * its processor with the same authority the stream hands it, answers one here. Undefined: such
   * a host's claims wait until its stream wakes it.
   */
  protected reviveStream(): HostedStream | undefined {
    return this.openStream();
  }

  /**
   * False while this incarnation holds something a stream's session must keep in memory (live
   * capabilities, runs under way): the host then refuses to release the session. True by default.
   */
  protected mayRelease(): boolean {
    return true;
  }

  /**
   * Whether this host folds the stream named `coordinate` (`<projectId>:<path>`). By default a host
   * folds exactly the stream it is named after, as every platform host is; override to fold others.
   */
  protected acceptsStream(coordinate: string): boolean {
    return coordinate === this.ctx.id.name;
  }

  /** True once a stream (or the host itself) has woken the engine in this incarnation. */
  protected get woken(): boolean {
    return this.#engine !== undefined;
  }

  /**
   * Folds events this host appended itself, at once: read-your-writes without waiting for the
   * stream's delivery (which arrives later and is ignored as already folded). Storage gets them
   * with the next batch the stream delivers, before that batch is answered: a write here would be
   * a commit that whatever the host sends next waits for, and the stream still has them for a host
   * that dies first.
   */
  protected async ingest(events: StreamEvent[]): Promise<void> {
    if (!this.#engine) throw new ItxError("UNAVAILABLE", "this processor host has not been woken");
    // The stream's head as this host knows it: the append that wrote them just answered with them.
    const [outcome] = await this.#engine.deliver(events, { head: events.at(-1)?.offset, own: true });
    if (outcome?.status === "failed") throw outcome.error;
  }

  /** Where the processor stands. */
  async snapshot(): Promise<ProcessorSnapshot> {
    const engine = this.#engine;
    if (engine) {
      await this.#starting;
      return engine.snapshot(this.processor.contract.slug);
    }
    const stored = (await this.ctx.storage.get(checkpointKey(this.processor.contract.slug))) as ProcessorSnapshot | undefined;
    return stored
      ? { offset: stored.offset, state: stored.state, version: stored.version, skipped: stored.skipped }
      : { offset: 0, state: this.processor.contract.initialState(), version: this.processor.contract.version, skipped: 0 };
  }

  /**
   * Revives background work whose claim outlived its incarnation. A host no stream has woken in
   * this incarnation (the OS restarted mid-work) wakes itself through `reviveStream()`: its start
   * revives the claims, catches up, and re-drives the work at head. A subclass that uses the alarm
   * for its own ends calls `super.alarm()` from its override, and moves the alarm only earlier.
   */
  override async alarm(): Promise<void> {
    this.#revivalArmed = false;
    if (!this.#engine) {
      const stream = this.reviveStream();
      const coordinate = this.ctx.id.name;
      if (stream === undefined || coordinate === undefined) return;
      // The wake keeps the stream as the one its engine reads through, until a stream's own wake replaces it.
      await this.wakeStreamProcessor({ name: this.processor.contract.slug, stream, coordinate });
      return;
    }
    await this.#engine.reviveClaims();
    await this.#scheduleRevival();
  }

  // A checkpoint is a fold of one stream. One that does not say which (written before hosts checked
  // their wakes), or says another, may hold a foreign stream's events and offset: it is dropped,
  // and the engine rebuilds it quietly by replaying this stream (no side effects run again).
  async #foldOnly(coordinate: string): Promise<void> {
    const folded = await this.ctx.storage.get(FOLDED_STREAM_KEY);
    if (folded === coordinate) return;
    const slug = this.processor.contract.slug;
    if (await this.ctx.storage.delete(checkpointKey(slug))) {
      console.warn(`processor host ${String(this.ctx.id.name)}: rebuilding ${slug} from ${coordinate} (its checkpoint did not name that stream)`);
    }
    await this.ctx.storage.put(FOLDED_STREAM_KEY, coordinate);
  }

  async #processEventBatch(events: StreamEvent[], head?: number): Promise<{ offset: number }> {
    if (!this.#engine) throw new ItxError("UNAVAILABLE", "this processor host has not been woken");
    const [outcome] = await this.#engine.deliver(events, { head: Number.isSafeInteger(head) ? head : undefined });
    if (outcome?.status === "failed") throw outcome.error;
    return { offset: outcome?.offset ?? 0 };
  }

  // The stream's session idled out. Let go of what it handed over only when nothing here needs it:
  // the engine is idle, the subclass agrees, and the host can open its own stream from now on.
  #release(handed: HostedStream): boolean {
    if (this.#stream !== handed) return true;
    if (this.#engine && !this.#engine.isIdle()) return false;
    if (!this.mayRelease() || this.openStream() === undefined) return false;
    this.#stream = undefined;
    disposeQuietly(handed);
    return true;
  }

  // While claims of work not given up exist, check on them again later: work that died with an
  // incarnation is re-driven. A given-up claim is a tombstone that stays: it arms nothing.
  async #scheduleRevival(): Promise<void> {
    const claims = await this.#engine?.claims();
    if (claims?.some((claim) => claim.status !== "given-up")) await this.#armRevival();
  }

  // An alarm at most REVIVAL_CHECK_MS away, set once per stretch of claimed work: called as a claim
  // is written, it lands in that write's commit. Only ever moved earlier, never over a subclass's
  // own earlier alarm.
  #armRevival(): Promise<void> {
    if (this.#revivalArmed) return Promise.resolve();
    this.#revivalArmed = true;
    const at = Date.now() + REVIVAL_CHECK_MS;
    const storage = this.ctx.storage;
    const armed = storage.getAlarm().then(async (current) => {
      if (current === null || current > at) await storage.setAlarm(at);
    });
    return armed.catch((error: unknown) => {
      this.#revivalArmed = false;
      console.warn(`processor host ${String(this.ctx.id.name)}: could not arm its revival alarm: ${String(error)}`);
    });
  }

  // The engine reads and appends through whichever stream capability the latest wake handed over.
  #currentStream(): ProcessorStream {
    const stream = () => {
      const current = this.#stream ?? this.openStream();
      if (!current) throw new ItxError("UNAVAILABLE", "no stream has woken this processor host yet");
      return current;
    };
    return {
      read: ({ afterOffset, limit }) => stream().getEvents({ afterOffset, limit }),
      head: () => stream().head(),
      append: (...inputs) => stream().append(...inputs),
    };
  }
}

function disposeQuietly(value: unknown): void {
  try {
    (value as Partial<Disposable> | undefined)?.[Symbol.dispose]?.();
  } catch {
    // already released
  }
}
