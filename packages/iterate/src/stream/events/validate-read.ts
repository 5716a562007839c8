import type { GetEventsInput, WaitForEventInput } from "../../types.ts";
import { validateEventType } from "./event-type.ts";
import { invalidInput } from "./invalid-argument.ts";
import { copyJsonValue } from "./json-value.ts";
import { isPlainObject, utf8FitsIn } from "./json.ts";
import { READ_DEFAULT_LIMIT, STREAM_LIMITS } from "./limits.ts";

/** A read request with its defaults filled in. */
export type ValidGetEventsInput = GetEventsInput & { afterOffset: number; limit: number };

/** A wait request with its defaults filled in. */
export type ValidWaitForEventInput = WaitForEventInput & { afterOffset: number };

/**
 * Checks the argument of `getEvents`: offsets are non-negative integers, `limit` is 1 to
 * READ_MAX_LIMIT, `types` is a list of 1 to READ_MAX_TYPES valid types, and nothing else is allowed.
 * Missing input reads from the start with the default limit.
 *
 * @example
 * validateGetEventsInput({ afterOffset: 10 }); // { afterOffset: 10, limit: 100 }
 * validateGetEventsInput({ afterOffset: -1 }); // throws INVALID_ARGUMENT
 */
export function validateGetEventsInput(input: unknown = {}): ValidGetEventsInput {
  const fields = checkFields(input, ["afterOffset", "beforeOffset", "types", "limit"], "getEvents");
  const result: ValidGetEventsInput = {
    afterOffset: checkOffset(fields.afterOffset, "afterOffset") ?? 0,
    limit: READ_DEFAULT_LIMIT,
  };
  const beforeOffset = checkOffset(fields.beforeOffset, "beforeOffset");
  if (beforeOffset !== undefined) result.beforeOffset = beforeOffset;
  if (fields.limit !== undefined) {
    const limit = fields.limit;
    if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > STREAM_LIMITS.READ_MAX_LIMIT) {
      throw invalidInput(`limit must be an integer from 1 to ${STREAM_LIMITS.READ_MAX_LIMIT}`, {
        field: "limit",
        limit: "READ_MAX_LIMIT",
      });
    }
    result.limit = limit;
  }
  if (fields.types !== undefined) result.types = checkTypes(fields.types);
  return result;
}

/**
 * Checks the argument of `waitForEvent`: `timeoutMs` is required, an integer from 0 to
 * WAIT_MAX_TIMEOUT_MS; `afterOffset` is a non-negative integer; `payload` is a plain JSON object.
 *
 * @example
 * validateWaitForEventInput({ type: "demo/pong", timeoutMs: 5_000 }); // { type, timeoutMs, afterOffset: 0 }
 */
export function validateWaitForEventInput(input: unknown): ValidWaitForEventInput {
  const fields = checkFields(input, ["type", "types", "payload", "afterOffset", "timeoutMs"], "waitForEvent");
  const timeoutMs = fields.timeoutMs;
  if (
    typeof timeoutMs !== "number" ||
    !Number.isInteger(timeoutMs) ||
    timeoutMs < 0 ||
    timeoutMs > STREAM_LIMITS.WAIT_MAX_TIMEOUT_MS
  ) {
    throw invalidInput(`timeoutMs must be an integer from 0 to ${STREAM_LIMITS.WAIT_MAX_TIMEOUT_MS}`, {
      field: "timeoutMs",
      limit: "WAIT_MAX_TIMEOUT_MS",
    });
  }
  const result: ValidWaitForEventInput = { timeoutMs, afterOffset: checkOffset(fields.afterOffset, "afterOffset") ?? 0 };
  if (fields.type !== undefined) {
    validateEventType(fields.type);
    result.type = fields.type;
  }
  if (fields.types !== undefined) {
    if (fields.type !== undefined) throw invalidInput("waitForEvent takes type or types, not both", { field: "types" });
    result.types = checkTypes(fields.types);
  }
  if (fields.payload !== undefined) {
    if (!isPlainObject(fields.payload)) throw invalidInput("payload must be a plain object", { field: "payload" });
    result.payload = copyJsonValue(fields.payload, "payload") as Record<string, unknown>;
    if (!utf8FitsIn(JSON.stringify(result.payload), STREAM_LIMITS.WAIT_PATTERN_MAX_BYTES)) {
      throw invalidInput(`a waitForEvent payload pattern is at most ${STREAM_LIMITS.WAIT_PATTERN_MAX_BYTES} bytes of JSON`, {
        field: "payload",
        limit: "WAIT_PATTERN_MAX_BYTES",
      });
    }
  }
  return result;
}

function checkTypes(types: unknown): string[] {
  if (!Array.isArray(types) || types.length === 0) {
    throw invalidInput("types must be a non-empty list; leave it out to take every type", { field: "types" });
  }
  if (types.length > STREAM_LIMITS.READ_MAX_TYPES) {
    throw invalidInput(`types holds at most ${STREAM_LIMITS.READ_MAX_TYPES} types, got ${types.length}`, {
      field: "types",
      limit: "READ_MAX_TYPES",
    });
  }
  for (const type of types) validateEventType(type);
  return [...(types as string[])];
}

function checkFields(input: unknown, allowed: readonly string[], call: string): Record<string, unknown> {
  if (!isPlainObject(input)) throw invalidInput(`the argument of ${call} must be a plain object`);
  for (const key of Object.keys(input)) {
    if (!allowed.includes(key)) {
      throw invalidInput(`unknown field "${key}"; ${call} takes ${allowed.join(", ")}`, { field: key });
    }
  }
  return input;
}

function checkOffset(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw invalidInput(`${field} must be a non-negative integer`, { field });
  }
  return value;
}
