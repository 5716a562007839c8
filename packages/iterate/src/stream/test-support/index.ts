/**
 * `iterate/stream/test-support`: run processors in plain Node without the platform. Reduce tables
 * with `reduceProcessor`, processEvent rows with `processEventOnce` and a `fakeClock`, and whole
 * engines over `memoryStream` and `memoryStorage`, awaited with `settle`. `expectCode` checks that a
 * call failed with a given error code; `checkAgainstZod` that a schema's compiled parser answers as zod.
 *
 * @example
 * import { reduceProcessor } from "iterate/stream/test-support";
 * const state = reduceProcessor(new Counter(), [{ type: "test/counter-incremented", payload: { by: 1 } }]);
 * @module
 */
export { committedEvent, committedEvents, TEST_EPOCH, type PartialEvent } from "./committed-event.ts";
export { reduceProcessor } from "./reduce-processor.ts";
export { processEventOnce, type ProcessEventOnceInput, type ProcessEventRecord } from "./process-event-once.ts";
export { memoryStream, type MemoryStream, type MemoryStreamOptions } from "./memory-stream.ts";
export { memoryStorage, type MemoryStorage } from "./memory-storage.ts";
export { fakeClock, type FakeClock } from "./fake-clock.ts";
export { connectEngine, settle, type EngineConnection } from "./settle.ts";
export { expectCode } from "./expect-code.ts";
export { checkAgainstZod, type EquivalenceReport } from "./zod-equivalence.ts";
