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
