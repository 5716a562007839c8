import { DurableObject } from "cloudflare:workers";
import { ItxError } from "../errors/index.ts";
import type { EventInput, ProcessorSnapshot, StreamEvent } from "../types.ts";
import { ProcessorEngine } from "../stream/processor/engine.ts";
import { checkpointKey, type ProcessorStorage, type ProcessorStream } from "../stream/processor/host.ts";
import type { AnyStreamProcessor } from "../stream/processor/stream-processor.ts";

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
  processEventBatch(events: StreamEvent[]): Promise<{ offset: number }>;
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

  #engine: ProcessorEngine | undefined;

  /** Called by a stream. Catches up from the checkpoint, then answers where the stream should continue. */
  async wakeStreamProcessor(input: { name: string; stream: HostedStream }): Promise<WokenProcessor> {
    const slug = this.processor.contract.slug;
    if (input.name !== slug) throw new ItxError("NOT_FOUND", `this host runs processor ${slug}, not ${input.name}`);
    // Parameters are released when this call returns: keep our own reference to the stream.
    const stream = input.stream.dup ? input.stream.dup() : input.stream;
    this.#engine?.stop();
    const engine = new ProcessorEngine({
      stream: adaptStream(stream),
      storage: this.ctx.storage as unknown as ProcessorStorage,
      processors: [this.processor],
    });
    this.#engine = engine;
    const report = await engine.start();
    const failed = report.outcomes.find((outcome) => outcome.status === "failed");
    if (failed?.status === "failed") throw failed.error;
    await this.#scheduleRevival();
    return {
      checkpoint: (await engine.snapshot(slug)).offset,
      processEventBatch: (events: StreamEvent[]) => this.#processEventBatch(engine, events),
    };
  }

  /** Where the processor stands. */
  async snapshot(): Promise<ProcessorSnapshot> {
    const engine = this.#engine;
    if (engine) return engine.snapshot(this.processor.contract.slug);
    const stored = (await this.ctx.storage.get(checkpointKey(this.processor.contract.slug))) as ProcessorSnapshot | undefined;
    return stored
      ? { offset: stored.offset, state: stored.state, version: stored.version, skipped: stored.skipped }
      : { offset: 0, state: this.processor.contract.initialState(), version: this.processor.contract.version, skipped: 0 };
  }

  /** Revives background work whose claim outlived its incarnation. */
  override async alarm(): Promise<void> {
    if (!this.#engine) return;
    await this.#engine.reviveClaims();
    await this.#scheduleRevival();
  }

  async #processEventBatch(engine: ProcessorEngine, events: StreamEvent[]): Promise<{ offset: number }> {
    if (engine !== this.#engine) throw new ItxError("UNAVAILABLE", "this processor session was replaced; wake the host again");
    const [outcome] = await engine.deliver(events);
    if (outcome?.status === "failed") throw outcome.error;
    return { offset: outcome?.offset ?? 0 };
  }

  // While claims exist, check on them again later: work that died with an incarnation is re-driven.
  async #scheduleRevival(): Promise<void> {
    const claims = await this.#engine?.claims();
    if (claims && claims.length > 0) await this.ctx.storage.setAlarm(Date.now() + 5_000);
  }
}

function adaptStream(stream: HostedStream): ProcessorStream {
  return {
    read: ({ afterOffset, limit }) => stream.getEvents({ afterOffset, limit }),
    head: () => stream.head(),
    append: (...inputs) => stream.append(...inputs),
  };
}
