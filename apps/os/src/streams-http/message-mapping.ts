import type { EventInput } from "iterate/types";
import { LIMITS } from "../limits.ts";
import { STREAM_LIMITS, jsonDepth, provesAppend } from "iterate/stream/events";
import { CheckedEventInputs } from "../stream/append-plan.ts";

/**
 * How Durable Streams messages are kept as events (decision 0013). A JSON-mode message becomes
 * one event of MESSAGE_APPENDED whose payload is the message itself; a byte-mode body becomes
 * BYTES_APPENDED events holding its bytes in chunks. Any other event of the stream (a context's
 * facts, a Cap'n Web writer's own types) is shown to JSON-mode readers as the event object itself.
 */
export const MESSAGE_APPENDED = "events.iterate.com/durable-streams/message-appended";
export const BYTES_APPENDED = "events.iterate.com/durable-streams/bytes-appended";

/** The payload of a BYTES_APPENDED event: UTF-8 text for text streams, base64 otherwise. */
export type BytesPayload = { text: string } | { base64: string };

/**
 * A body turned into event inputs, in chunks of at most APPEND_MAX_EVENTS each (JSON mode: arrays
 * of inputs; byte mode: JSON array text); or why it is not one.
 */
export type BodyEvents = { chunks: Array<string | EventInput[] | CheckedEventInputs>; count: number } | { invalid: string };

/**
 * A JSON-mode append body as the Worker sends it to the Stream: decoded, not parsed. The Stream
 * parses it once (`eventsOfJson`) and checks the messages in place, instead of the Worker parsing
 * and re-serializing every message for the Stream to parse again.
 */
export interface JsonBody {
  json: string;
}

/** The media type of a Content-Type value, lowercased, without parameters. */
export function mediaType(contentType: string | null | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

export function isJsonMode(contentType: string): boolean {
  return mediaType(contentType) === "application/json";
}

/** Whether SSE sends this stream's data as text (JSON and text/*) or base64. */
export function isTextMode(contentType: string): boolean {
  const type = mediaType(contentType);
  return type === "application/json" || type.startsWith("text/");
}

/**
 * The events for one request body. JSON mode: a top-level array is a batch of messages (empty
 * only when creating), any other value is one message. Byte mode: the bytes in chunks.
 */
export function eventsOfBody(body: Uint8Array, contentType: string, creating: boolean): BodyEvents {
  if (body.length === 0) return { chunks: [], count: 0 };
  if (isJsonMode(contentType)) {
    const decoded = decodeJsonBody(body);
    return "invalid" in decoded ? decoded : eventsOfJson(decoded.json, creating);
  }
  return chunkedText(bytesEvents(body, contentType));
}

/** A JSON-mode body's text, for the Stream to parse (`eventsOfJson`); or why it is not UTF-8. */
export function decodeJsonBody(body: Uint8Array): JsonBody | { invalid: string } {
  try {
    return { json: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body) };
  } catch {
    return { invalid: "Invalid JSON: the body is not UTF-8" };
  }
}

/** The events of a JSON-mode body's text: each message one MESSAGE_APPENDED input, its payload the parsed message. */
export function eventsOfJson(text: string, creating: boolean): BodyEvents {
  const parsed = parseMessages(text, creating);
  if ("invalid" in parsed) return parsed;
  return { chunks: chunksOf(parsed.messages), count: parsed.messages.length };
}

/**
 * `eventsOfJson` for the Stream's own append: when the text itself proves that its messages pass
 * every check of `validateAppendBatch` (`provenValid`), the chunks say so (CheckedEventInputs) and
 * the append skips those checks; otherwise they are plain inputs, checked as any other.
 */
export function checkedEventsOfJson(text: string): BodyEvents {
  const parsed = parseMessages(text, false);
  if ("invalid" in parsed) return parsed;
  const chunks = chunksOf(parsed.messages);
  const proven = provenValid(text, parsed.depth, parsed.array, parsed.messages.length);
  return { chunks: proven ? chunks.map((inputs) => new CheckedEventInputs(inputs)) : chunks, count: parsed.messages.length };
}

function parseMessages(text: string, creating: boolean): { messages: unknown[]; depth: number; array: boolean } | { invalid: string } {
  const depth = jsonDepth(text, LIMITS.STREAMS_HTTP_JSON_MAX_DEPTH + 1);
  if (depth > LIMITS.STREAMS_HTTP_JSON_MAX_DEPTH + 1) {
    return { invalid: `Invalid JSON: nested deeper than ${LIMITS.STREAMS_HTTP_JSON_MAX_DEPTH} levels (STREAMS_HTTP_JSON_MAX_DEPTH)` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { invalid: "Invalid JSON" };
  }
  const array = Array.isArray(value);
  const messages: unknown[] = Array.isArray(value) ? value : [value];
  if (messages.length === 0 && !creating) return { invalid: "Empty arrays are not allowed" };
  if (messages.length > LIMITS.STREAMS_HTTP_BODY_MAX_MESSAGES) {
    return { invalid: `a body holds at most ${LIMITS.STREAMS_HTTP_BODY_MAX_MESSAGES} messages (STREAMS_HTTP_BODY_MAX_MESSAGES)` };
  }
  return { messages, depth, array };
}

function chunksOf(messages: unknown[]): Array<Array<EventInput & { payload: unknown }>> {
  const chunks: Array<Array<EventInput & { payload: unknown }>> = [];
  for (let start = 0; start < messages.length; start += STREAM_LIMITS.APPEND_MAX_EVENTS) {
    chunks.push(messages.slice(start, start + STREAM_LIMITS.APPEND_MAX_EVENTS).map((payload: unknown) => ({ type: MESSAGE_APPENDED, payload })));
  }
  return chunks;
}

// What an event adds around its payload as JSON: {"type":"<MESSAGE_APPENDED>","payload":...}.
const MESSAGE_EVENT_OVERHEAD = JSON.stringify({ type: MESSAGE_APPENDED, payload: 0 }).length - 1;

/**
 * Whether every message parsed from `text` passes validateAppendBatch as a MESSAGE_APPENDED input,
 * shown from the text and what parsing it already measured (`provesAppend`): each message is a
 * payload inside the body's array (if any), and its event adds the envelope around it.
 * Anything it cannot show is left to the full checks: a false answer costs time, never an event.
 */
export function provenValid(text: string, depth: number, array: boolean, count: number): boolean {
  return provesAppend(text, { depth, around: array ? 1 : 0, count, addedPerEvent: MESSAGE_EVENT_OVERHEAD });
}

function bytesEvents(body: Uint8Array, contentType: string): string[] {
  const events: string[] = [];
  const size = LIMITS.STREAMS_HTTP_BYTES_CHUNK;
  const text = mediaType(contentType).startsWith("text/") ? utf8(body) : undefined;
  if (text !== undefined) {
    // Characters, not bytes, so no chunk splits a character; a quarter of the byte chunk keeps an
    // all-escapes chunk (6 bytes of JSON per character) under the event size limit.
    const step = size / 4;
    for (let start = 0; start < text.length; ) {
      let end = Math.min(text.length, start + step);
      if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
      events.push(bytesEvent({ text: text.slice(start, end) }));
      start = end;
    }
    return events;
  }
  for (let start = 0; start < body.length; start += size) {
    events.push(bytesEvent({ base64: base64(body.subarray(start, start + size)) }));
  }
  return events;
}

function bytesEvent(payload: BytesPayload): string {
  return `{"type":"${BYTES_APPENDED}","payload":${JSON.stringify(payload)}}`;
}

function chunkedText(events: string[]): BodyEvents {
  const chunks: string[] = [];
  for (let start = 0; start < events.length; start += STREAM_LIMITS.APPEND_MAX_EVENTS) {
    chunks.push(`[${events.slice(start, start + STREAM_LIMITS.APPEND_MAX_EVENTS).join(",")}]`);
  }
  return { chunks, count: events.length };
}


/** The bytes a BYTES_APPENDED payload holds. */
export function bytesOfPayload(payload: BytesPayload): Uint8Array {
  if ("text" in payload) return new TextEncoder().encode(payload.text);
  const binary = atob(payload.base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function utf8(body: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    return undefined;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
