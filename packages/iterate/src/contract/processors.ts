// Processors: what a stream processor's host records and answers. Part of the contract of record (types.ts).

/** An event a processor did not fold because its payload failed the contract's schema. */
export interface SkippedEvent {
  offset: number;
  type: string;
  /** What was wrong, one line per problem, e.g. "name: Invalid input: expected string". */
  issues: string[];
}

/** Where a processor stands in its stream: what the engine's `snapshot(slug)` answers. */
export interface ProcessorSnapshot<State = unknown> {
  /** The last durable offset folded into `state`; 0 before the first. */
  offset: number;
  state: State;
  /** The contract version that reduced `state`. */
  version: string;
  /** How many events were skipped for failing their schema. */
  skipped: number;
}

/**
 * Work a processor started with `runInBackground`, recorded in the host's storage before the work
 * starts and deleted when it settles. A claim still there after its host died is revived.
 */
export interface BackgroundClaim {
  /** The processor that asked for the work. */
  slug: string;
  /** The processor's name for the work; one live run per key. */
  key: string;
  /** How many times the work was started under this claim. */
  attempts: number;
  /** Epoch milliseconds before which the work is not started again. */
  nextAttemptAt: number;
  /** waiting: to start at nextAttemptAt; running: started and not settled; given-up: died too often. */
  status: "waiting" | "running" | "given-up";
}

/** How a multi-step run ended. `refused` is an expected outcome; the others may be run again. */
export type RunStatus = "succeeded" | "refused" | "failed" | "unavailable";

/** The payload of a run's one terminal `<x>-settled` fact. */
export interface RunSettledPayload {
  /** The offset of the `<x>-requested` fact: the run's id. */
  requestOffset: number;
  status: RunStatus;
  error?: string;
}

/** A config-repo processor subscribed to a stream, and how its delivery stands. */
export interface UserProcessorRow {
  /** The subscription's key (kebab-case), unique in its stream. */
  key: string;
  /** The `StreamProcessorDurableObject` subclass `worker.ts` exports. */
  className: string;
  /** The offset its host last committed, as far as the stream knows. */
  cursor: number;
  /** Deliveries failed in a row. */
  failures: number;
  lastError?: string;
}

/** A config-repo processor's committed state: what `itx.processor.snapshot(key)` answers. */
export interface UserProcessorSnapshot<State = unknown> {
  key: string;
  className: string;
  /** The stream it folds. */
  stream: string;
  /** The last offset folded into `state`. */
  offset: number;
  state: State;
  version: string;
  skipped: number;
  /** Present while delivery is halted (USER_PROCESSOR_FAILURES_MAX failures of one batch); a new commit of worker.ts resumes it. */
  halted?: { offset: number; hash: string; error: { code: string; message: string } };
}

/**
 * `itx.processor`: processors written in the project's config repo (`StreamProcessorDurableObject`
 * subclasses exported by `worker.ts`) that fold this context's stream, each with its own durable state.
 */
export interface Processors {
  /** Subscribes `className` to this context's stream under `key`; INVALID_ARGUMENT when worker.ts exports no such processor. */
  subscribe(input: { key: string; className: string }): { key: string; className: string; stream: string; subscribedAtOffset: number };
  /** Ends the subscription; its state stays for a later subscribe under the same key. */
  unsubscribe(key: string): boolean;
  list(): UserProcessorRow[];
  /** NOT_FOUND when no processor is subscribed here under `key`. */
  snapshot(key: string): UserProcessorSnapshot;
}
