/**
 * `iterate/sdk`: base classes for code the platform runs inside workerd.
 *
 * @example
 * import { StreamProcessorDurableObject } from "iterate/sdk";
 * @module
 */
export {
  StreamProcessorDurableObject,
  type HostedStream,
  type WokenProcessor,
} from "./stream-processor-durable-object.ts";
export {
  IterateConfigEntrypoint,
  IterateDurableObject,
  type ConfigCallProps,
  IterateEntrypoint,
  type ItxBinding,
  type ItxEnv,
  type ItxScope,
  type Pipelined,
  type Remote,
} from "./worker.ts";
export { ITERATE_WORKER_MODULE } from "./worker-module.generated.ts";
export { ITX_TYPES } from "./itx-types.generated.ts";
