import { ItxError } from "../../errors/index.ts";
import type { BackgroundClaim, ProcessorSnapshot, StreamEvent } from "../../types.ts";
import { STREAM_LIMITS } from "../events/index.ts";
import { BackgroundWork, type BackgroundErrorReport } from "./background-work.ts";
import { systemClock, type EngineClock, type ProcessorStorage, type ProcessorStream } from "./host.ts";
import { ProcessorRunner, type ProcessorOutcome, type SkipReport } from "./processor-runner.ts";
import type { AnyStreamProcessor } from "./stream-processor.ts";

/** The engine's own limits; each has a default. */
export interface ProcessorEngineLimits {
  /** Largest checkpoint, as JSON bytes, a processor may commit (default 1 MiB). Past it a batch fails with LIMIT_EXCEEDED. */
  checkpointMaxBytes?: number;
  /** Events per read when catching up, and so per checkpoint commit (default 500, at most READ_MAX_LIMIT). */
  batchSize?: number;
  /** Deaths of one background claim before it is given up (default 5). */
  maxBackgroundDeaths?: number;
}

export interface ProcessorEngineOptions {
  stream: ProcessorStream;
  storage: ProcessorStorage;
  /** Each with its own contract slug; the slug keys its checkpoint and claims. */
  processors: readonly AnyStreamProcessor[];
  clock?: EngineClock;
  limits?: ProcessorEngineLimits;
  /** An event skipped for failing its schema. The checkpoint counts it too. */
  onSkip?(report: SkipReport): void;
  /** A background claim that died `maxBackgroundDeaths` times and will not be started again. */
  onGiveUp?(claim: BackgroundClaim): void;
  /**
   * A background claim was just written running (in the same turn as its write). A host arms here
   * whatever wakes it should it die with the work under way: see StreamProcessorDurableObject.
   */
  onClaim?(claim: BackgroundClaim): void;
  /** Background work that threw. Its claim is released: the work decides what a failure means. Default: console.error. */
  onBackgroundError?(report: BackgroundErrorReport): void;
}

/** What a revival found and did. */
export interface RevivalReport {
  /** One per processor: its catch-up, ending with the at-head pass that re-drives work. */
  outcomes: ProcessorOutcome[];
  /** Claims left by a dead host and now waiting out their backoff for a driver. */
  revived: BackgroundClaim[];
  /** Claims that died too often; `onGiveUp` was told. */
  givenUp: BackgroundClaim[];
  /** Revived claims no processor took up again at head, now deleted. */
  released: BackgroundClaim[];
}

const DEFAULT_LIMITS = { checkpointMaxBytes: 1_048_576, batchSize: 500, maxBackgroundDeaths: 5 } as const;

/**
 * Hosts processors over one stream: one serial chain per processor, a checkpoint per batch, the
 * at-head pass, rebuilds on a version bump, and background work that survives its host.
 *
 * @example
 * const engine = new ProcessorEngine({ stream, storage: ctx.storage, processors: [new Greeter(mailer)] });
 * await engine.start(); // revive claims, catch up, re-drive work at head
 * stream.subscribe((events) => engine.deliver(events));
 */
export class ProcessorEngine {
  readonly #runners = new Map<string, ProcessorRunner>();
  readonly #background: BackgroundWork;
  #stopped = false;

  constructor(options: ProcessorEngineOptions) {
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    checkLimit("batchSize", limits.batchSize, STREAM_LIMITS.READ_MAX_LIMIT);
    checkLimit("checkpointMaxBytes", limits.checkpointMaxBytes, Number.MAX_SAFE_INTEGER);
    checkLimit("maxBackgroundDeaths", limits.maxBackgroundDeaths, Number.MAX_SAFE_INTEGER);
    const clock = options.clock ?? systemClock;
    this.#background = new BackgroundWork({
      storage: options.storage,
      clock,
      maxDeaths: limits.maxBackgroundDeaths,
      onGiveUp: (claim) => options.onGiveUp?.(claim),
      onError: options.onBackgroundError ?? defaultBackgroundError,
      afterWork: (slug) => this.#runner(slug).catchUp(false),
      ...(options.onClaim ? { onClaim: options.onClaim } : {}),
    });
    for (const processor of options.processors) {
      const { slug } = processor.contract;
      if (this.#runners.has(slug)) throw new ItxError("INVALID_ARGUMENT", `two processors share the slug "${slug}"`);
      this.#runners.set(
        slug,
        new ProcessorRunner({
          processor,
          stream: options.stream,
          storage: options.storage,
          clock,
          background: this.#background,
          checkpointMaxBytes: limits.checkpointMaxBytes,
          batchSize: limits.batchSize,
          onSkip: (report) => options.onSkip?.(report),
          isStopped: () => this.#stopped,
        }),
      );
    }
  }

  /** The slugs of the hosted processors. */
  get slugs(): string[] {
    return [...this.#runners.keys()];
  }

  /** What a host calls when it wakes: revive claims a dead host left, catch up, and re-drive work at head. */
  start(): Promise<RevivalReport> {
    return this.reviveClaims();
  }

  /**
   * Hands a pushed batch to every processor, each on its own chain, and answers how each fared.
   * Already-folded events are ignored, so redelivery is safe. `head`, when the pusher knows it (the
   * stream's head when it read the batch), spares each processor asking the stream for it; it is
   * as fresh as an answer to `head()` would be when it arrived. `own`: the host's own writes,
   * folded as its append answers; they are written to storage with the next batch the stream
   * delivers, or the next catch-up (a batch from the stream is answered only once written).
   */
  deliver(events: readonly StreamEvent[], options: { head?: number | undefined; own?: boolean } = {}): Promise<ProcessorOutcome[]> {
    return Promise.all([...this.#runners.values()].map((runner) => runner.deliver(events, options.head, options.own === true)));
  }

  /** Pulls every processor from its checkpoint to the head, ending with an at-head pass. */
  catchUp(): Promise<ProcessorOutcome[]> {
    return Promise.all([...this.#runners.values()].map((runner) => runner.catchUp()));
  }

  /**
   * Counts a death for every claim a dead host left running, catches up (the at-head pass lets each
   * processor take its work up again, after the claim's backoff), then deletes revived claims no
   * processor took up. Hosts call it on start and from their alarm.
   */
  async reviveClaims(): Promise<RevivalReport> {
    const report: RevivalReport = { outcomes: [], revived: [], givenUp: [], released: [] };
    for (const slug of this.#runners.keys()) {
      const { waiting, givenUp } = await this.#background.revive(slug);
      report.revived.push(...waiting);
      report.givenUp.push(...givenUp);
    }
    report.outcomes = await this.catchUp();
    for (const claim of report.revived) {
      const outcome = report.outcomes.find((candidate) => candidate.slug === claim.slug);
      // A failed pass may not have reached the processor's re-drive; keep the claim for the next try.
      if (outcome?.status === "processed" && (await this.#background.release(claim))) report.released.push(claim);
    }
    return report;
  }

  /** Where a processor stands: its committed offset, state, contract version and skip count. */
  snapshot(slug: string): Promise<ProcessorSnapshot> {
    return this.#runner(slug).snapshot();
  }

  /** Every stored background claim of the hosted processors, given-up ones included. */
  async claims(): Promise<BackgroundClaim[]> {
    const lists = await Promise.all(this.slugs.map((slug) => this.#background.claims(slug)));
    return lists.flat();
  }

  /** True while `key` is live for `slug` in this engine. */
  isRunningInBackground(slug: string, key: string): boolean {
    return this.#background.isLive(slug, key);
  }

  /** Resolves when no chain has work queued. */
  async chainsIdle(): Promise<void> {
    while (!this.#chainsAreIdle()) await Promise.all([...this.#runners.values()].map((runner) => runner.whenIdle()));
  }

  /** Resolves when no background work is live. */
  backgroundIdle(): Promise<void> {
    return this.#background.idle();
  }

  /** True when no chain has work queued and no background work is live. */
  isIdle(): boolean {
    return this.#chainsAreIdle() && this.#background.liveCount === 0;
  }

  /**
   * Stops the engine as its host goes away: no more batches, appends or claim deletions. Claims of
   * unfinished work stay in storage, so the next host revives them as it would after a crash.
   */
  stop(): void {
    this.#stopped = true;
    this.#background.stop();
  }

  #chainsAreIdle(): boolean {
    return [...this.#runners.values()].every((runner) => runner.idle);
  }

  #runner(slug: string): ProcessorRunner {
    const runner = this.#runners.get(slug);
    if (runner === undefined) throw new ItxError("INVALID_ARGUMENT", `no processor "${slug}" in this engine`);
    return runner;
  }
}

function checkLimit(name: string, value: number, max: number): void {
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new ItxError("INVALID_ARGUMENT", `limits.${name} must be an integer from 1 to ${max}, got ${value}`);
  }
}

function defaultBackgroundError({ slug, key, error }: BackgroundErrorReport): void {
  console.error(`background work "${key}" of processor "${slug}" failed`, error);
}
