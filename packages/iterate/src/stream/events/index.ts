/**
 * `iterate/stream/events`: the validation every stream applies to what it is given. The platform's
 * Stream Durable Object and the in-memory stream of `iterate/stream/test-support` share it, so
 * both accept and refuse exactly the same inputs.
 *
 * @example
 * import { validateAppendBatch, STREAM_LIMITS } from "iterate/stream/events";
 * const events = validateAppendBatch(untrusted); // throws INVALID_ARGUMENT naming the limit crossed
 * @module
 */
export { STREAM_LIMITS, READ_DEFAULT_LIMIT, type StreamLimit } from "./limits.ts";
export type { InvalidInputDetails } from "./invalid-argument.ts";
export {
  PLATFORM_EVENT_PREFIX,
  checkPlatformEventName,
  eventTypeFormatProblems,
  isPlatformEventType,
  validateEventType,
} from "./event-type.ts";
export { validateAppendBatch, validateAppendText, validateEventInput, type ValidEventInput, type ValidateOptions } from "./validate-event-input.ts";
export {
  validateGetEventsInput,
  validateWaitForEventInput,
  type ValidGetEventsInput,
  type ValidWaitForEventInput,
} from "./validate-read.ts";
export { isPlainObject, matchesPayload, sameEventBody, stableJson, utf8ByteLength, utf8FitsIn, type EventBody } from "./json.ts";
export { copyJsonValue } from "./json-value.ts";
export { SERIALIZED_GROWTH_MAX, holdsOnlyPayloadValues, jsonDepth, provesAppend, type AppendTextShape } from "./json-text.ts";
export { REACTION_BEGAN_MAX_LENGTH, parseReaction, reactionTo } from "./reaction.ts";
export { unpackEvents } from "./packed-page.ts";
