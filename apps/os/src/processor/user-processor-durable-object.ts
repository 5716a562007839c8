import { DurableObject } from "cloudflare:workers";
import { errorCode, errorMessage, ItxError } from "iterate/errors";
import type { StreamEvent, UserProcessorSnapshot } from "iterate/types";
import { answerCoded, asCoded, throwCoded, type Coded } from "../api/coded-result.ts";
import { relay } from "../api/relay.ts";
import { runnerFacet } from "../capability-host/capability-dispatch.ts";
import { callMembers } from "../capability-host/source-capability.ts";
import { LIMITS, limitDetails } from "../limits.ts";
import type { CertifiedWorker } from "../project/project-durable-object.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { builtLoad, loadBuilt } from "../worker-loader/dynamic-workers.ts";
import { invokeInRunner } from "../worker-loader/runner-isolate-rpc-target.ts";
import { HeldRunner } from "../worker-loader/runner-client.ts";
import { UNTRUSTED_LIMITS } from "../worker-loader/untrusted-limits.ts";
import type { BuiltWorker } from "../worker-loader/worker-build.ts";
import { parseUserProcessorHostName, processorFacetKey, USER_PROCESSOR_ROW_PREFIX, type UserProcessorAddress } from "./user-processor-address.ts";
import { raceDeadline } from "../limits/deadline.ts";

/** The fact a halted subscription leaves on its stream (the platform's: see write-authority.ts). */
export const SUBSCRIPTION_DELIVERY_HALTED = "events.iterate.com/itx/subscription-delivery-halted";

/** What a wake answers: the facet's checkpoint and where the stream sends batches. */
export interface WokenUserProcessor {
  checkpoint: number;
  processEventBatch: (events: StreamEvent[]) => Promise<{ offset: number }>;
  /** The stream's session is idle: this host lets go of what it loaded (see `#release`). */
  release: () => Promise<boolean>;
}

type CodedFailure = { __itxCodedFailure: { code: string; message: string } };

interface HaltRecord {
  offset: number;
  /** The artifact that failed: other code is tried again. */
  hash: string;
  error: { code: string; message: string };
}

/** The project's certified worker as this host loaded it. */
type Loaded = CertifiedWorker & { built: BuiltWorker };

const FAILURES_KEY = "failures";
const HALTED_KEY = "halted";

/**
 * Hosts one config-repo processor subscribed to one stream: the stream wakes it (binding
 * USER_PROCESSOR) like any processor host, and it hands each batch to the user's
 * `StreamProcessorDurableObject` running as a facet, in the runner's process when there is one
 * (decision 0007), with its own SQLite. The facet folds and commits; this object keeps what the
 * user's code must not decide: which stream it folds (its name), which code runs (the project's
 * certified worker, looked up per batch so a commit takes effect), the deadline, and when a
 * failing processor halts. It never hands the user's code the stream capability it is woken with.
 */
export class UserProcessorDurableObject extends DurableObject<Env> {
  readonly #address: UserProcessorAddress;
  #worker: Loaded | undefined;
  /** The artifact the in-process facet was started from. */
  #facetHash: string | undefined;
  /** This object's open session into the runner (local OS only), for its calls on the processor's facet. */
  readonly #runner = new HeldRunner();
  /** Calls on that session now, and whether it is to be let go once they are done. */
  #runnerCalls = 0;
  #releaseRunner = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#address = parseUserProcessorHostName(ctx.id.name);
  }

  /** Called by the stream it is subscribed to: answers the facet's checkpoint and where to send batches. */
  wakeStreamProcessor(input: { name: string; coordinate: string }): Promise<WokenUserProcessor | CodedFailure> {
    return answerCoded(async () => {
      const { projectId, path, key } = this.#address;
      if (input.name !== key || input.coordinate !== `${projectId}:${path}`) throw new ItxError("NOT_FOUND", `this host folds ${path} as ${key}, nothing else`);
      const worker = await this.#refresh();
      await this.#refuseIfHalted(worker.hash);
      const checkpoint = offsetOf(await this.#call(worker, ["processorCheckpoint"], []), Number.MAX_SAFE_INTEGER);
      return { checkpoint, processEventBatch: (events: StreamEvent[]) => this.#batch(events), release: async () => this.#release() };
    });
  }

  /** Loads the processor and asks its checkpoint: `itx.processor.subscribe` fails now, not at the first event. */
  check(): Promise<Coded<{ offset: number }>> {
    return asCoded(async () => {
      const worker = await this.#refresh();
      try {
        return { offset: offsetOf(await this.#call(worker, ["processorCheckpoint"], []), Number.MAX_SAFE_INTEGER) };
      } catch (error) {
        const code = errorCode(error);
        if (code === "UNAVAILABLE" || code === "TIMEOUT" || code === "RESOURCE_EXHAUSTED") throw error;
        throw new ItxError("INVALID_ARGUMENT", `${this.#address.className} is not a StreamProcessorDurableObject exported by worker.ts: ${errorMessage(error).slice(0, 500)}`);
      }
    });
  }

  /** The processor's committed state, and its halt when delivery is halted. */
  snapshot(): Promise<Coded<UserProcessorSnapshot>> {
    return asCoded(async () => {
      const worker = await this.#refresh();
      const answer = await this.#call(worker, ["processorSnapshot"], []);
      const text = JSON.stringify(answer) ?? "";
      if (text.length > LIMITS.USER_PROCESSOR_SNAPSHOT_MAX_CHARS) {
        throw new ItxError("LIMIT_EXCEEDED", `the processor's state is over ${LIMITS.USER_PROCESSOR_SNAPSHOT_MAX_CHARS} characters`, { details: limitDetails("USER_PROCESSOR_SNAPSHOT_MAX_CHARS") });
      }
      const { offset, state, version, skipped } = (answer ?? {}) as Record<string, unknown>;
      if (typeof offset !== "number" || typeof version !== "string") throw new ItxError("INVALID_ARGUMENT", "the processor answered no checkpoint");
      const halted = await this.ctx.storage.get<HaltRecord>(HALTED_KEY);
      const { key, className, path } = this.#address;
      return { key, className, stream: path, offset, state, version, skipped: typeof skipped === "number" ? skipped : 0, ...(halted ? { halted } : {}) };
    });
  }

  // Without a release, a stream held its session into this host for good, and so both objects in
  // memory, this one with its own copy of the project's worker (up to BUNDLE_OUTPUT_MAX_CHARS):
  // a project subscribing many streams pinned as many copies. Everything here is read again on
  // the next wake or batch (`#refresh`), so an idle session lets it all go.
  #release(): boolean {
    this.#worker = undefined;
    // A snapshot or check may still be calling on the runner session: it is let go when the last is done.
    this.#releaseRunner = true;
    if (this.#runnerCalls === 0) this.#letRunnerGo();
    return true;
  }

  #letRunnerGo(): void {
    this.#releaseRunner = false;
    this.#runner.release();
  }

  // The worker is taken once per batch and used throughout (a release meanwhile does not change
  // which code a failure is charged to).
  async #batch(events: StreamEvent[]): Promise<{ offset: number }> {
    const worker = await this.#refresh();
    await this.#refuseIfHalted(worker.hash);
    const first = events[0]?.offset ?? 0;
    try {
      // The user's code may answer anything: never past what it was given.
      const offset = offsetOf(await this.#call(worker, ["processorBatch"], [events]), events.at(-1)?.offset ?? 0);
      await this.ctx.storage.delete(FAILURES_KEY);
      return { offset };
    } catch (error) {
      await this.#failed(first, error, worker.hash);
      throw error;
    }
  }

  // Failures of the same batch are counted; at the limit the subscription halts with a fact, and
  // the stream's retries are refused at once until the worker's code changes.
  async #failed(offset: number, error: unknown, hash: string): Promise<void> {
    const prior = await this.ctx.storage.get<{ offset: number; count: number }>(FAILURES_KEY);
    const count = prior?.offset === offset ? prior.count + 1 : 1;
    if (count < LIMITS.USER_PROCESSOR_FAILURES_MAX) {
      await this.ctx.storage.put(FAILURES_KEY, { offset, count });
      return;
    }
    const halted: HaltRecord = { offset, hash, error: { code: errorCode(error) ?? "SCRIPT_FAILED", message: errorMessage(error).slice(0, 2_000) } };
    await this.ctx.storage.put(HALTED_KEY, halted);
    await this.ctx.storage.delete(FAILURES_KEY);
    const { projectId, path, key, className } = this.#address;
    try {
      await streamStub(this.env.STREAM, `${projectId}:${path}`).append({
        events: [
          {
            type: SUBSCRIPTION_DELIVERY_HALTED,
            payload: { key: `${USER_PROCESSOR_ROW_PREFIX}${key}`, className, offset, failures: count, error: halted.error },
            idempotencyKey: `itx/subscription-delivery-halted:${key}:${offset}:${hash}`,
          },
        ],
        stamp: { platform: "processor" },
      });
    } catch (appendError) {
      // Halted here before, at the same offset with the same code: its fact stands.
      if (errorCode(appendError) !== "IDEMPOTENCY_CONFLICT") throw appendError;
    }
  }

  async #refuseIfHalted(hash: string): Promise<void> {
    const halted = await this.ctx.storage.get<HaltRecord>(HALTED_KEY);
    if (!halted) return;
    if (halted.hash !== hash) {
      await this.ctx.storage.delete(HALTED_KEY);
      return;
    }
    throw new ItxError("UNAVAILABLE", `delivery to ${this.#address.className} halted at offset ${halted.offset} (${halted.error.message.slice(0, 200)}); commit a fix to worker.ts to resume`);
  }

  // The project's certified worker now: a commit that changed it is picked up by the next batch.
  // Answered as well as kept, so a caller uses the one it got even if a release drops it meanwhile.
  async #refresh(): Promise<Loaded> {
    const project = this.env.PROJECT.getByName(`${this.#address.projectId}:/`);
    const known = this.#worker;
    const answer = throwCoded<CertifiedWorker | null>(await relay(project.certifiedWorker(known?.hash)));
    if (answer === null) throw new ItxError("UNAVAILABLE", "the project has no worker yet");
    let worker: Loaded;
    if (answer.built) worker = { ...answer, built: answer.built };
    else if (known) worker = { ...known, isolate: answer.isolate };
    else throw new ItxError("UNAVAILABLE", "the project's worker was not handed over");
    this.#worker = worker;
    return worker;
  }

  async #call(worker: Loaded, member: string[], args: unknown[]): Promise<unknown> {
    const { projectId, path, className } = this.#address;
    const facetKey = processorFacetKey(this.#address);
    // Locally the facet lives in the runner process: code in it that never yields holds that process, not the OS.
    if (this.env.RUNNER) {
      const facet = runnerFacet(projectId, path, facetKey, className);
      this.#runnerCalls += 1;
      try {
        return await invokeInRunner(this.env.RUNNER, builtLoad(worker.built, worker.isolate), { facet, path: member, args }, worker.isolate, this.#runner);
      } finally {
        this.#runnerCalls -= 1;
        if (this.#runnerCalls === 0 && this.#releaseRunner) this.#letRunnerGo();
      }
    }
    // A facet keeps the class it started with: other code restarts it (its storage stays).
    if (this.#facetHash !== undefined && this.#facetHash !== worker.hash) this.ctx.facets.abort(facetKey, new Error("its code changed"));
    this.#facetHash = worker.hash;
    const facet = this.ctx.facets.get(facetKey, () => ({ class: loadBuilt(this.env, worker.built, worker.isolate).getDurableObjectClass(className) }));
    return withDeadline(callMembers(facet, member, args), UNTRUSTED_LIMITS.CALL_TIMEOUT_MS);
  }
}

function offsetOf(answer: unknown, max: number): number {
  const offset = (answer as { offset?: unknown } | null)?.offset;
  if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0 || offset > max) {
    throw new ItxError("INVALID_ARGUMENT", `the processor answered an offset that is not one of its batch's (${String(offset).slice(0, 32)})`);
  }
  return offset;
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  return raceDeadline(work, ms, (): never => {
    throw new ItxError("TIMEOUT", `the processor ran past its ${ms} ms deadline`, { details: { timeoutMs: ms } });
  });
}
