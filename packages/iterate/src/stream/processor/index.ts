/**
 * `iterate/stream/processor`: define a processor contract, write a processor, and host processors
 * over a stream with the engine.
 *
 * @example
 * import { ProcessorEngine, StreamProcessor, defineProcessorContract } from "iterate/stream/processor";
 * @module
 */
export {
  defineProcessorContract,
  formatIssues,
  type AnyProcessorContract,
  type ConsumedEvent,
  type EmittedInput,
  type EventCatalog,
  type PayloadCheck,
  type ProcessorContract,
  type ProcessorContractDefinition,
  type StateOf,
} from "./contract.ts";
export {
  StreamProcessor,
  type AnyStreamProcessor,
  type BackgroundContext,
  type BackgroundInput,
  type BackgroundStart,
  type ProcessEventArgs,
  type ProcessEventInput,
  type ReduceArgs,
  type ReduceInput,
} from "./stream-processor.ts";
export {
  ProcessorEngine,
  type ProcessorEngineLimits,
  type ProcessorEngineOptions,
  type RevivalReport,
} from "./engine.ts";
export type { ProcessorOutcome, SkipReport } from "./processor-runner.ts";
export type { BackgroundErrorReport } from "./background-work.ts";
export { BACKGROUND_BACKOFF_BASE_MS } from "./background-work.ts";
export {
  checkpointKey,
  claimKey,
  claimPrefix,
  systemClock,
  type EngineClock,
  type ProcessorStorage,
  type ProcessorStream,
} from "./host.ts";
export { RECENT_SKIPS_MAX, type ProcessorCheckpoint } from "./checkpoint.ts";
export { foldEvent, type FoldStep } from "./fold.ts";
export {
  MAX_RUN_ATTEMPTS,
  RUN_STATUSES,
  factName,
  isRunOpen,
  nextRunAction,
  runAttemptPayloadSchema,
  runSettledPayloadSchema,
  runState,
  runStateSchema,
  runStatusSchema,
  settledKey,
  stepKey,
  type RunAction,
  type RunFacts,
  type RunSettledPayload,
  type RunState,
  type RunStatus,
} from "./multi-step-run.ts";
export type { BackgroundClaim, ProcessorSnapshot, SkippedEvent } from "../../types.ts";
