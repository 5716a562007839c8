import type { EventInput, EventSource } from "../../types.ts";
import { validateEventType } from "./event-type.ts";
import { atIndex, invalidInput } from "./invalid-argument.ts";
import { assertWellFormed, checkJsonValue, copyJsonValue } from "./json-value.ts";
import { isPlainObject, utf8ByteLength } from "./json.ts";
import { jsonDepth, provesAppend } from "./json-text.ts";
import { STREAM_LIMITS } from "./limits.ts";
import { parseReaction } from "./reaction.ts";

const INPUT_FIELDS: ReadonlySet<string> = new Set(["type", "payload", "idempotencyKey", "ephemeral", "source"]);
const SOURCE_FIELDS: ReadonlySet<string> = new Set(["origin", "principal", "platform", "processor", "reaction"]);

/** An event input that passed validation: a private copy, with the payload always present. */
export type ValidEventInput = EventInput & { payload: unknown };

/**
 * Checks one untrusted event input and returns a normalised copy: unknown fields, wrong types,
 * payloads JSON cannot hold, and inputs past a named limit all throw INVALID_ARGUMENT with
 * `details.limit` or `details.field` saying why. An omitted payload becomes `{}`, `ephemeral:
 * false` is dropped, and keys whose value is `undefined` disappear, as they would in JSON.
 *
 * @example
 * validateEventInput({ type: "demo/ping" }); // { type: "demo/ping", payload: {} }
 * validateEventInput({ type: "demo/ping", colour: "red" }); // throws: unknown field "colour"
 */
export function validateEventInput(input: unknown): ValidEventInput {
  return checkEventInput(input, "copy").event;
}

/** How a batch is checked. */
export interface ValidateOptions {
  /**
   * The inputs are the caller's alone (it parsed them from text, or received them as a serialized
   * RPC argument): payloads are checked in place instead of copied. Every check still runs.
   */
  owned?: boolean;
}

/**
 * Checks a whole append: 1 to APPEND_MAX_EVENTS inputs of at most APPEND_MAX_BYTES together, each
 * valid on its own. The error for a bad event names its position in `details.index`.
 *
 * @example
 * validateAppendBatch([{ type: "demo/ping" }, { type: "demo/pong", payload: { n: 1 } }]);
 */
export function validateAppendBatch(inputs: unknown, options: ValidateOptions = {}): ValidEventInput[] {
  return checkBatch(inputs, options.owned === true ? "check" : "copy");
}

// What an input's event can add around the text it came from: `,"payload":{}` when it has none.
const OMITTED_PAYLOAD_CHARS = ',"payload":{}'.length;

/**
 * `validateAppendBatch` for an append written as JSON text (one array of event inputs), parsed
 * here. When the text itself shows that every payload is valid and every event and the append
 * fit their byte limits (below), payloads are not walked and events are not serialized to be
 * measured; each input's fields, type, key and source are checked as always. Otherwise the
 * parsed inputs get every check. Either way the verdict is `validateAppendBatch`'s, for text of
 * at most APPEND_MAX_BYTES characters: longer text is refused before it is parsed, even when its
 * events would fit once its whitespace and escapes are gone (as `validateAppendBatch` measures).
 *
 * What the text shows is `provesAppend`'s: payloads nest inside the array and the input object,
 * and an input may gain an omitted payload (`,"payload":{}`).
 *
 * @example
 * validateAppendText('[{"type":"demo/ping"},{"type":"demo/pong","payload":{"n":1}}]');
 */
export function validateAppendText(text: string): ValidEventInput[] {
  if (text.length > STREAM_LIMITS.APPEND_MAX_BYTES) {
    throw invalidInput(`an append is at most ${STREAM_LIMITS.APPEND_MAX_BYTES} bytes of JSON`, { limit: "APPEND_MAX_BYTES" });
  }
  const depth = jsonDepth(text, STREAM_LIMITS.PAYLOAD_MAX_DEPTH + 2);
  let inputs: unknown;
  try {
    inputs = JSON.parse(text);
  } catch {
    throw invalidInput("events is a string but not a JSON array of event inputs");
  }
  const count = Array.isArray(inputs) ? inputs.length : 0;
  const proven = provesAppend(text, { depth, around: 2, count, addedPerEvent: OMITTED_PAYLOAD_CHARS });
  return checkBatch(inputs, proven ? "proven" : "check");
}

function checkBatch(inputs: unknown, payloads: PayloadCheck): ValidEventInput[] {
  if (!Array.isArray(inputs)) throw invalidInput("an append takes a list of event inputs");
  if (inputs.length === 0) throw invalidInput("an append needs at least one event");
  if (inputs.length > STREAM_LIMITS.APPEND_MAX_EVENTS) {
    throw invalidInput(`an append holds at most ${STREAM_LIMITS.APPEND_MAX_EVENTS} events, got ${inputs.length}`, {
      limit: "APPEND_MAX_EVENTS",
    });
  }
  let totalUnits = 0;
  const texts: string[] = [];
  const events = inputs.map((input: unknown, index) => {
    try {
      const checked = checkEventInput(input, payloads);
      if (checked.json !== undefined) {
        totalUnits += checked.json.length;
        texts.push(checked.json);
      }
      return checked.event;
    } catch (error) {
      throw atIndex(error, index);
    }
  });
  // A UTF-16 unit is at most 3 UTF-8 bytes: bytes are counted only when that bound passes the limit.
  const totalBytes = totalUnits * 3 <= STREAM_LIMITS.APPEND_MAX_BYTES ? totalUnits : texts.reduce((sum, text) => sum + utf8ByteLength(text), 0);
  if (totalBytes > STREAM_LIMITS.APPEND_MAX_BYTES) {
    throw invalidInput(`an append holds at most ${STREAM_LIMITS.APPEND_MAX_BYTES} bytes of JSON, got ${totalBytes}`, {
      limit: "APPEND_MAX_BYTES",
    });
  }
  return events;
}

/**
 * How payloads are checked: copied (the caller may still hold them), checked in place (nobody
 * else does), or not at all, with the event's size unmeasured (the text they were parsed from
 * proved both: `validateAppendText`).
 */
type PayloadCheck = "copy" | "check" | "proven";

function checkEventInput(input: unknown, payloads: PayloadCheck): { event: ValidEventInput; json: string | undefined } {
  if (!isPlainObject(input)) throw invalidInput("an event input must be a plain object");
  for (const key of Object.keys(input)) {
    if (!INPUT_FIELDS.has(key)) {
      throw invalidInput(`unknown field "${key}"; an event input has ${[...INPUT_FIELDS].join(", ")}`, { field: key });
    }
  }
  validateEventType(input.type);
  const event: ValidEventInput = {
    type: input.type,
    payload: input.payload === undefined ? {} : payloads === "proven" ? input.payload : payloads === "check" ? checkJsonValue(input.payload, "payload") : copyJsonValue(input.payload, "payload"),
  };
  const key = checkIdempotencyKey(input.idempotencyKey);
  if (key !== undefined) event.idempotencyKey = key;
  if (input.ephemeral !== undefined && typeof input.ephemeral !== "boolean") {
    throw invalidInput("ephemeral must be a boolean", { field: "ephemeral" });
  }
  if (input.ephemeral === true) {
    // An ephemeral event is never stored, so a repeat has nothing to be compared with.
    if (key !== undefined) throw invalidInput("an ephemeral event cannot carry an idempotencyKey", { field: "idempotencyKey" });
    event.ephemeral = true;
  }
  if (input.source !== undefined) event.source = checkSource(input.source);
  if (payloads === "proven") return { event, json: undefined };
  const json = JSON.stringify(event);
  const bytes = json.length * 3 <= STREAM_LIMITS.EVENT_MAX_BYTES ? json.length : utf8ByteLength(json);
  if (bytes > STREAM_LIMITS.EVENT_MAX_BYTES) {
    throw invalidInput(`an event is at most ${STREAM_LIMITS.EVENT_MAX_BYTES} bytes of JSON, got ${bytes}`, {
      limit: "EVENT_MAX_BYTES",
    });
  }
  return { event, json };
}

function checkIdempotencyKey(key: unknown): string | undefined {
  if (key === undefined) return undefined;
  if (typeof key !== "string" || key.length === 0) {
    throw invalidInput("idempotencyKey must be a non-empty string", { field: "idempotencyKey" });
  }
  if (key.length > STREAM_LIMITS.IDEMPOTENCY_KEY_MAX_LENGTH) {
    throw invalidInput(
      `idempotencyKey is at most ${STREAM_LIMITS.IDEMPOTENCY_KEY_MAX_LENGTH} characters, got ${key.length}`,
      { field: "idempotencyKey", limit: "IDEMPOTENCY_KEY_MAX_LENGTH" },
    );
  }
  assertWellFormed(key, "idempotencyKey");
  return key;
}

function checkSource(source: unknown): EventSource {
  if (!isPlainObject(source)) throw invalidInput("source must be a plain object", { field: "source" });
  const result: EventSource = {};
  for (const [key, value] of Object.entries(source)) {
    if (!SOURCE_FIELDS.has(key)) {
      throw invalidInput(`unknown field "source.${key}"; a source has ${[...SOURCE_FIELDS].join(", ")}`, {
        field: `source.${key}`,
      });
    }
    if (value === undefined) continue;
    if (key === "reaction") {
      const reaction = parseReaction(value);
      if (!reaction) throw invalidInput("source.reaction is { began, round }", { field: "source.reaction" });
      result.reaction = reaction;
      continue;
    }
    if (typeof value !== "string") throw invalidInput(`source.${key} must be a string`, { field: `source.${key}` });
    assertWellFormed(value, `source.${key}`);
    result[key as Exclude<keyof EventSource, "reaction">] = value;
  }
  return result;
}
