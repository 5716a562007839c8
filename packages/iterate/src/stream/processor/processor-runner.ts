import { ItxError, errorCode } from "../../errors/index.ts";
import type { EventInput, ProcessorSnapshot, Reaction, SkippedEvent, StreamEvent } from "../../types.ts";
import { reactionTo } from "../events/reaction.ts";
import type { BackgroundWork } from "./background-work.ts";
import { stoppedError } from "./background-work.ts";
import {
  advanceCheckpoint,
  commitCheckpoint,
  emptyCheckpoint,
  loadCheckpoint,
  markBorn,
  type ProcessorCheckpoint,
} from "./checkpoint.ts";
import { stampEmitted } from "./emit.ts";
import { foldEvent } from "./fold.ts";
import type { EngineClock, ProcessorStorage, ProcessorStream } from "./host.ts";
import { SerialChain } from "./serial-chain.ts";
import type { AnyStreamProcessor, BackgroundStart, ProcessEventInput } from "./stream-processor.ts";

/** A skipped event as the engine reports it: which processor skipped it, and why. */
export interface SkipReport extends SkippedEvent {
  slug: string;
}

/** How one processor fared with a delivery or a catch-up. */
export type ProcessorOutcome =
  /** Everything was folded; `offset` is the checkpoint (committed, or ahead only past types the processor does not consume). */
  | { slug: string; status: "processed"; offset: number }
  /** Stopped at an error; the checkpoint stays before the failing event so that redelivery retries it. */
  | { slug: string; status: "failed"; offset: number; error: unknown };

export interface RunnerOptions {
  processor: AnyStreamProcessor;
  stream: ProcessorStream;
  storage: ProcessorStorage;
  clock: EngineClock;
  background: BackgroundWork;
  checkpointMaxBytes: number;
  batchSize: number;
  onSkip(report: SkipReport): void;
  isStopped(): boolean;
}

/**
 * Hosts one processor: its serial chain, its committed checkpoint, and the fold. Everything that
 * touches the checkpoint runs on the chain. The checkpoint in memory is the committed one, or ahead
 * of it by events storage does not need yet:
 * - events the processor does not consume: they change no state, so a batch of nothing else is
 *   not written (a restart reads them again and passes them by again);
 * - the host's own writes, folded as its append answers (`own`): the stream has not delivered
 *   them, and cannot pass them before a delivery from it is answered, which writes them first. A
 *   host that dies before that reads them again from the stream.
 */
export class ProcessorRunner {
  readonly slug: string;
  readonly #options: RunnerOptions;
  readonly #chain = new SerialChain();
  #committed: ProcessorCheckpoint | undefined;
  #born = false;
  // Whether storage holds a checkpoint of this processor (loaded, or committed by this runner), and
  // whether the one in memory folded consumed events that storage does not hold yet (own writes).
  #stored = false;
  #unwritten = false;
  // The newest folded state, committed or not, for background work to read. Folding is
  // deterministic, so a state a failed batch never committed is the one its retry will fold again.
  #latest: { state: unknown } | undefined;
  // Set by a rebuild: the next delivery or catch-up makes an at-head pass even if it folds nothing,
  // so that work a replay did not re-run is driven again from the rebuilt state.
  #passAfterRebuild = false;

  constructor(options: RunnerOptions) {
    this.#options = options;
    this.slug = options.processor.contract.slug;
  }

  /**
   * Folds a pushed batch; events at or below the checkpoint are ignored, a hole is read from the
   * stream. `head`: the stream's head as the pusher knew it (asked of the stream when absent).
   * `own`: the host's own writes, which it folds as its append answers; storage gets them with the
   * next batch the stream delivers (see the class comment). Anything else answers once written.
   */
  deliver(events: readonly StreamEvent[], head?: number, own = false): Promise<ProcessorOutcome> {
    return this.#outcome(() => this.#deliver(events, head, own));
  }

  /**
   * Pulls from the checkpoint to the head in batches, then makes the at-head pass. With `write`
   * false (background work settling), own writes folded earlier stay unwritten until the stream's
   * next delivery: the catch-up only makes sure the work's own appends are folded.
   */
  catchUp(write = true): Promise<ProcessorOutcome> {
    return this.#outcome(() => this.#catchUp(write));
  }

  async snapshot(): Promise<ProcessorSnapshot> {
    const checkpoint = this.#committed ?? (await this.#chain.run(() => this.#load()));
    const { offset, state, version, skipped } = checkpoint;
    return { offset, state, version, skipped };
  }

  /** The newest folded state: the one processEvent was last given, or the committed one. */
  latestState(): unknown {
    if (this.#latest !== undefined) return this.#latest.state;
    return this.#committed?.state ?? this.#options.processor.contract.initialState();
  }

  get idle(): boolean {
    return this.#chain.idle;
  }

  whenIdle(): Promise<void> {
    return this.#chain.whenIdle();
  }

  #outcome(work: () => Promise<void>): Promise<ProcessorOutcome> {
    return this.#chain.run(async () => {
      try {
        if (this.#options.isStopped()) throw stoppedError();
        await work();
        return { slug: this.slug, status: "processed", offset: this.#committed?.offset ?? 0 };
      } catch (error) {
        return { slug: this.slug, status: "failed", offset: this.#committed?.offset ?? 0, error };
      }
    });
  }

  async #deliver(events: readonly StreamEvent[], knownHead: number | undefined, own: boolean): Promise<void> {
    // A head below the batch's own events is no head at all: ask the stream instead.
    const pushedHead = knownHead !== undefined && knownHead >= (events.at(-1)?.offset ?? 0) ? knownHead : undefined;
    const before = (await this.#load()).offset;
    const fresh = events.filter((event) => event.ephemeral !== true && event.offset > before);
    const last = fresh.at(-1);
    if (last !== undefined && fresh.some((event, i) => event.offset !== before + 1 + i)) {
      // A hole before or inside the batch: read the durable range from the stream instead.
      await this.#pullThrough(last.offset, own);
      const ephemeral = events.filter((event) => event.ephemeral === true);
      if (ephemeral.length > 0) await this.#runBatch(ephemeral);
    } else {
      await this.#runBatch(events, pushedHead, own);
    }
    const after = this.#checkpoint().offset;
    if ((after > before || this.#passAfterRebuild) && after >= (pushedHead ?? (await this.#options.stream.head()))) {
      await this.#atHeadPass();
    }
    if (!own) await this.#writeUnwritten();
  }

  async #catchUp(write: boolean): Promise<void> {
    await this.#load();
    await this.#pullThrough(Number.POSITIVE_INFINITY);
    await this.#atHeadPass();
    if (write) await this.#writeUnwritten();
  }

  async #pullThrough(lastOffset: number, own = false): Promise<void> {
    const { stream, batchSize } = this.#options;
    for (;;) {
      const from = this.#checkpoint().offset;
      if (from >= lastOffset) return;
      const page = await stream.read({ afterOffset: from, limit: Math.min(batchSize, lastOffset - from) });
      if (page.length === 0) return;
      await this.#runBatch(page, undefined, own);
    }
  }

  // Before the stream is answered (or a catch-up ends): storage holds everything folded.
  async #writeUnwritten(): Promise<void> {
    if (this.#unwritten) await this.#commit(this.#checkpoint(), []);
  }

  /**
   * Folds and processes one batch, then commits once (unless storage need not have it yet: see the
   * class comment). A failure commits what came before it and rethrows.
   */
  async #runBatch(events: readonly StreamEvent[], knownHead?: number, own = false): Promise<void> {
    const { processor, stream } = this.#options;
    const head = knownHead ?? (await stream.head());
    let working = this.#checkpoint();
    const skips: SkippedEvent[] = [];
    // Whether the batch held an event the processor consumes (folded or skipped): only then is
    // there anything to write. Offsets alone stay in memory (see the class comment).
    let consumed = false;
    for (const event of events) {
      try {
        if (event.ephemeral === true) {
          await this.#passEphemeral(event, working.state, head);
          continue;
        }
        if (event.offset <= working.offset) continue;
        const step = foldEvent(processor, working.state, event);
        if (step.kind !== "ignored") consumed = true;
        if (step.kind === "folded") this.#latest = { state: step.state };
        if (step.kind === "folded" && processor.processEvent !== undefined) {
          await this.#pass({ event: step.event, state: step.state, previousState: working.state, caughtUp: event.offset >= head });
        }
        if (step.kind === "skipped") skips.push({ offset: event.offset, type: event.type, issues: step.issues });
        working = advanceCheckpoint(working, event, step);
      } catch (error) {
        this.#latest = undefined;
        if (working !== this.#committed) await this.#commit(working, skips).catch(() => undefined);
        throw error;
      }
    }
    try {
      if (working !== this.#committed) {
        const later = this.#stored && skips.length === 0 && (own || !consumed);
        if (!later) {
          await this.#commit(working, skips);
        } else {
          this.#committed = working;
          if (consumed) this.#unwritten = true;
        }
      }
    } finally {
      this.#latest = undefined;
    }
  }

  async #passEphemeral(event: StreamEvent, state: unknown, head: number): Promise<void> {
    const { processor, onSkip } = this.#options;
    if (!processor.contract.isConsumed(event.type)) return;
    const parsed = processor.contract.parsePayload(event);
    if (!parsed.ok) return onSkip({ slug: this.slug, offset: event.offset, type: event.type, issues: parsed.issues });
    if (processor.processEvent === undefined) return;
    await this.#pass({ event: { ...event, payload: parsed.payload }, state, previousState: state, caughtUp: event.offset >= head });
  }

  async #atHeadPass(): Promise<void> {
    this.#passAfterRebuild = false;
    if (this.#options.processor.processEvent === undefined) return;
    const { state } = this.#checkpoint();
    await this.#pass({ event: null, state, previousState: state, caughtUp: true });
  }

  /** One call of processEvent, then every promise it asked the chain to wait for. */
  async #pass(args: { event: StreamEvent | null; state: unknown; previousState: unknown; caughtUp: boolean }) {
    const { processor, clock, background } = this.#options;
    const waitFor: Promise<unknown>[] = [];
    let open = true;
    // What a processor writes because of an event continues that event's chain of reactions, so
    // a processor appending what it handles is stopped by the stream after a few rounds.
    const reaction = args.event ? reactionTo(args.event) : undefined;
    const input: ProcessEventInput<unknown, StreamEvent, EventInput> = {
      event: args.event,
      state: args.state,
      previousState: args.previousState,
      delivery: { caughtUp: args.caughtUp },
      now: () => clock.now(),
      append: (...inputs) => this.append(inputs, reaction),
      blockProcessorWhile: (promise) => {
        if (!open) {
          throw new ItxError("INVALID_ARGUMENT", `${this.slug}: blockProcessorWhile was called after its event was processed`);
        }
        waitFor.push(promise);
      },
      runInBackground: (key, work) => {
        const started: Promise<BackgroundStart> = background.start(this.slug, key, (attempt) =>
          work({ state: () => this.latestState(), append: (...inputs) => this.append(inputs, reaction), now: () => clock.now(), attempt }),
        );
        if (open) waitFor.push(started);
        // Outside a pass nobody else waits for it; a processor that drops the promise must not crash the host.
        else started.catch(() => undefined);
        return started;
      },
    };
    const failures: unknown[] = [];
    try {
      await processor.processEvent?.(input);
    } catch (error) {
      failures.push(error);
    }
    // Settle every blocker even after a failure, so that none rejects unobserved.
    for (let waited = 0; waited < waitFor.length; ) {
      const settled = await Promise.allSettled(waitFor.slice(waited));
      waited += settled.length;
      for (const result of settled) if (result.status === "rejected") failures.push(result.reason);
    }
    open = false;
    // A write refused as a runaway reaction is the chain's stop, recorded on the stream: the
    // processor moves on rather than retrying the event forever.
    const real = failures.filter((failure) => errorCode(failure) !== "LOOP_LIMIT");
    if (real.length > 0) throw real[0];
  }

  /** Appends on the processor's behalf: only emitted types, payloads valid by schema, stamped with its slug. */
  async append(inputs: readonly EventInput[], reaction?: Reaction): Promise<StreamEvent[]> {
    if (this.#options.isStopped()) throw stoppedError();
    const stamped = stampEmitted(this.#options.processor.contract, inputs, reaction);
    return stamped.length === 0 ? [] : this.#options.stream.append(...stamped);
  }

  async #commit(checkpoint: ProcessorCheckpoint, skips: readonly SkippedEvent[]): Promise<void> {
    await commitCheckpoint(this.#options.storage, checkpoint, this.#options.checkpointMaxBytes);
    // In the same commit: the claims of work that settled since the last one.
    await this.#options.background.deleteSettled();
    this.#committed = checkpoint;
    this.#stored = true;
    this.#unwritten = false;
    if (!this.#born) {
      await markBorn(this.#options.storage, checkpoint);
      this.#born = true;
    }
    for (const skip of skips) if (skip.offset <= checkpoint.offset) this.#options.onSkip({ slug: this.slug, ...skip });
  }

  #checkpoint(): ProcessorCheckpoint {
    if (this.#committed === undefined) throw new ItxError("INTERNAL", `${this.slug}: used before its checkpoint was loaded`);
    return this.#committed;
  }

  /** Loads the checkpoint once; an outdated or deleted one is rebuilt by replay, without side effects. */
  async #load(): Promise<ProcessorCheckpoint> {
    if (this.#committed !== undefined) return this.#committed;
    const { storage, stream, processor, batchSize } = this.#options;
    const loaded = await loadCheckpoint(storage, processor.contract);
    if (loaded.kind === "current") {
      this.#stored = true;
      return (this.#committed = loaded.checkpoint);
    }
    if (loaded.kind === "new") return (this.#committed = emptyCheckpoint(processor.contract));
    const replayTo = loaded.replayTo ?? (await stream.head());
    let working = emptyCheckpoint(processor.contract);
    const skips: SkippedEvent[] = [];
    while (working.offset < replayTo) {
      const page = await stream.read({ afterOffset: working.offset, limit: Math.min(batchSize, replayTo - working.offset) });
      if (page.length === 0) break;
      for (const event of page) {
        if (event.ephemeral === true || event.offset <= working.offset) continue;
        const step = foldEvent(processor, working.state, event);
        if (step.kind === "skipped") skips.push({ offset: event.offset, type: event.type, issues: step.issues });
        working = advanceCheckpoint(working, event, step);
      }
    }
    await this.#commit(working, skips);
    this.#passAfterRebuild = true;
    return working;
  }
}
