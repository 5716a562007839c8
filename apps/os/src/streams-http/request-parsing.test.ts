import { describe, expect, test } from "vitest";
import { LIMITS } from "../limits.ts";
import { STREAM_LIMITS } from "iterate/stream/events";
import { jsonDepth } from "iterate/stream/events";
import { MESSAGE_APPENDED, checkedEventsOfJson, decodeJsonBody, eventsOfBody, eventsOfJson } from "./message-mapping.ts";
import { CheckedEventInputs } from "../stream/append-plan.ts";
import { validateAppendBatch } from "iterate/stream/events";
import { Refusal, boundedBody, expiry, header, producerHeaders, readQuery } from "./request-parsing.ts";

const put = (headers: Record<string, string>, body?: BodyInit) => new Request("http://os/streams/p/s", { method: "POST", headers, ...(body !== undefined ? { body } : {}) });
const nested = (depth: number) => new TextEncoder().encode(`[${"[".repeat(depth)}1${"]".repeat(depth)}]`);
const q = (query: string) => readQuery(new URL(`http://os/streams/p/s?${query}`));
const body = (text: string) => new TextEncoder().encode(text);
const ones = (count: number) => `[${Array.from({ length: count }, () => "1").join(",")}]`;
function refusal(run: () => unknown): number | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof Refusal ? error.status : -1;
  }
  return undefined;
}

/** A POST whose Content-Length says `length`, whatever its bytes are. */
function declared(length: number, bytes: Uint8Array): Request {
  return new Request("http://os/", { method: "POST", headers: { "content-length": String(length) }, body: bytes });
}

/** Whether checkedEventsOfJson marks every chunk of `text` as proven. */
function checked(text: string): boolean {
  const events = checkedEventsOfJson(text);
  if ("invalid" in events) throw new Error(events.invalid);
  return events.chunks.every((chunk) => chunk instanceof CheckedEventInputs);
}

/** `text` checked in full: the verdict the proof stands in for ("valid", a limit, or "refused"). */
function full(text: string): string {
  const events = eventsOfJson(text, false);
  if ("invalid" in events) return events.invalid;
  try {
    for (const chunk of events.chunks) validateAppendBatch(chunk, { owned: true });
    return "valid";
  } catch (error) {
    return (error as { details?: { limit?: string } }).details?.limit ?? "refused";
  }
}

const deep = (levels: number) => `${"[".repeat(levels)}1${"]".repeat(levels)}`;
const deepObject = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

describe("request limits", () => {
  test("STREAMS_HTTP_HEADER_MAX_LENGTH: a longer header is refused with 400", () => {
    const limit = LIMITS.STREAMS_HTTP_HEADER_MAX_LENGTH;
    expect(header(put({ "Stream-Seq": "a".repeat(limit) }), "Stream-Seq")).toHaveLength(limit);
    expect(refusal(() => header(put({ "Stream-Seq": "a".repeat(limit + 1) }), "Stream-Seq"))).toBe(400);
  });

  test("STREAMS_HTTP_BODY_MAX_BYTES: a declared or actual larger body is 413", async () => {
    const limit = LIMITS.STREAMS_HTTP_BODY_MAX_BYTES;
    expect((await boundedBody(put({}, new Uint8Array(limit)))).length).toBe(limit);
    await expect(boundedBody(put({}, new Uint8Array(limit + 1)))).rejects.toMatchObject({ status: 413 });
    const streamed = new ReadableStream({
      start(controller) {
        controller.enqueue(new Uint8Array(limit));
        controller.enqueue(new Uint8Array(1));
        controller.close();
      },
    });
    await expect(boundedBody(new Request("http://os/", { method: "POST", body: streamed, duplex: "half" } as RequestInit))).rejects.toMatchObject({ status: 413 });
  });

  test("STREAMS_HTTP_BODY_READ_TIMEOUT_MS: a body still arriving at the deadline is 408, read whole or in chunks", async () => {
    expect(LIMITS.STREAMS_HTTP_BODY_READ_TIMEOUT_MS).toBe(30_000);
    const chunked = new Request("http://os/", { method: "POST", body: trickle(), duplex: "half" } as RequestInit);
    await expect(boundedBody(chunked, 50)).rejects.toMatchObject({ status: 408 });
    const framed = new Request("http://os/", { method: "POST", headers: { "content-length": "10" }, body: trickle(), duplex: "half" } as RequestInit);
    await expect(boundedBody(framed, 50)).rejects.toMatchObject({ status: 408 });
    // A body that arrives in time is read as before.
    expect(await boundedBody(put({}, "[1]"), 50)).toEqual(body("[1]"));
  });

  test("STREAMS_HTTP_BODY_MAX_BYTES: a body read whole by its declared length is still measured", async () => {
    const limit = LIMITS.STREAMS_HTTP_BODY_MAX_BYTES;
    expect(await boundedBody(declared(3, new Uint8Array([1, 2, 3])))).toEqual(new Uint8Array([1, 2, 3]));
    // A declared length that lies (HTTP framing would not let it) cannot carry more than the limit.
    await expect(boundedBody(declared(10, new Uint8Array(limit + 1)))).rejects.toMatchObject({ status: 413 });
  });

  test("STREAMS_HTTP_JSON_MAX_DEPTH: deeper messages are refused before parsing, strings do not count", () => {
    const limit = LIMITS.STREAMS_HTTP_JSON_MAX_DEPTH;
    expect(eventsOfBody(nested(limit), "application/json", false)).toMatchObject({ count: 1 });
    expect(eventsOfBody(nested(limit + 1), "application/json", false)).toMatchObject({ invalid: expect.stringContaining("STREAMS_HTTP_JSON_MAX_DEPTH") });
    expect(jsonDepth(`{"a":"[[[[\\"[["}`)).toBe(1);
  });

  test("a JSON body whose text proves its messages valid skips their checks; anything unproven is checked in full", () => {
    // Proven: everything a proof accepts is valid in full, numbers that grow when re-serialized included.
    for (const text of [
      `[{"n":1},"two",null,true,-0,1e20,1E+99,-5e-324,${"9".repeat(99)},"\\u00e9\\uffff😀",{"\\"k":[]}]`,
      `[${deep(32)}]`,
      deepObject(32),
      `[${Array.from({ length: 500 }, (_, i) => i).join(",")}]`,
    ]) {
      expect(checked(text), text.slice(0, 40)).toBe(true);
      expect(full(text), text.slice(0, 40)).toBe("valid");
    }
    // Not proven, each for the reason named: the full checks decide.
    const unproven: Array<[string, string]> = [
      [`[{"a":"\\ud800"}]`, "refused"], // an escaped lone surrogate
      [`["\\ud83d\\ude00"]`, "valid"], // an escaped pair: not proven, yet valid
      ["[1e400]", "refused"], // Infinity
      [`[${"9".repeat(310)}]`, "refused"], // Infinity from digits alone
      [`[${"9".repeat(100)}]`, "valid"],
      [deepObject(33), "PAYLOAD_MAX_DEPTH"], // one message (not an array of them), 33 levels
      [JSON.stringify(["x".repeat(20_000)]), "valid"], // too long for the size bound to show
    ];
    for (const [text, verdict] of unproven) {
      expect(checked(text), text.slice(0, 40)).toBe(false);
      expect(full(text), text.slice(0, 40)).toBe(verdict);
    }
  });

  test("STREAMS_HTTP_BODY_MAX_MESSAGES: a JSON body of more messages is refused after parsing, before any event is made", () => {
    const max = LIMITS.STREAMS_HTTP_BODY_MAX_MESSAGES;
    expect(eventsOfJson(ones(max), false)).toMatchObject({ count: max });
    expect(eventsOfJson(ones(max + 1), false)).toEqual({ invalid: expect.stringContaining("STREAMS_HTTP_BODY_MAX_MESSAGES") });
    // The most a body under STREAMS_HTTP_BODY_MAX_BYTES can hold, on create as on append.
    const most = ones(Math.floor(LIMITS.STREAMS_HTTP_BODY_MAX_BYTES / 2) - 1);
    expect(eventsOfBody(body(most), "application/json", true)).toEqual({ invalid: expect.stringContaining("STREAMS_HTTP_BODY_MAX_MESSAGES") });
  });

  test("STREAMS_HTTP_TTL_MAX_SECONDS and the TTL grammar", () => {
    expect(expiry(put({ "Stream-TTL": String(LIMITS.STREAMS_HTTP_TTL_MAX_SECONDS) }))).toEqual({ ttlSeconds: LIMITS.STREAMS_HTTP_TTL_MAX_SECONDS });
    for (const bad of [String(LIMITS.STREAMS_HTTP_TTL_MAX_SECONDS + 1), "-1", "01", "+1", "1.5", "1e3"]) {
      expect(refusal(() => expiry(put({ "Stream-TTL": bad }))), bad).toBe(400);
    }
    expect(refusal(() => expiry(put({ "Stream-TTL": "1", "Stream-Expires-At": new Date().toISOString() })))).toBe(400);
  });

  test("producer headers come all together, as plain non-negative integers", () => {
    expect(producerHeaders(put({ "Producer-Id": "p", "Producer-Epoch": "2", "Producer-Seq": "0" }))).toEqual({ id: "p", epoch: 2, seq: 0 });
    expect(refusal(() => producerHeaders(put({ "Producer-Id": "p", "Producer-Epoch": "2" })))).toBe(400);
    expect(refusal(() => producerHeaders(put({ "Producer-Id": "", "Producer-Epoch": "0", "Producer-Seq": "0" })))).toBe(400);
    expect(refusal(() => producerHeaders(put({ "Producer-Id": "p", "Producer-Epoch": "1e3", "Producer-Seq": "0" })))).toBe(400);
    expect(refusal(() => producerHeaders(put({ "Producer-Id": "p", "Producer-Epoch": "0", "Producer-Seq": "99999999999999999999" })))).toBe(400);
  });

  test("read queries: one well-formed offset, required by live modes", () => {
    expect(q("offset=-1&live=sse")).toMatchObject({ from: { after: 0 }, live: "sse" });
    expect(q("")).toMatchObject({ from: { after: 0 }, offsetParam: "-1" });
    for (const bad of ["offset=", "offset=-1&offset=now", "live=long-poll", "offset=1", "offset=a,b"]) expect(refusal(() => q(bad)), bad).toBe(400);
  });
});

describe("bodies as events", () => {
  test("a JSON array is a batch of messages; a JSON value one message; an empty array only on create", () => {
    const batch = eventsOfBody(body(`[1, {"a": null}, [2]]`), "application/json; charset=utf-8", false);
    expect(batch).toMatchObject({ count: 3 });
    expect((batch as { chunks: unknown[][] }).chunks[0]).toEqual([
      { type: MESSAGE_APPENDED, payload: 1 },
      { type: MESSAGE_APPENDED, payload: { a: null } },
      { type: MESSAGE_APPENDED, payload: [2] },
    ]);
    expect(eventsOfBody(body("[]"), "application/json", false)).toHaveProperty("invalid");
    expect(eventsOfBody(body("[]"), "application/json", true)).toEqual({ chunks: [], count: 0 });
    expect(eventsOfBody(body("{"), "application/json", false)).toHaveProperty("invalid");
    expect(eventsOfBody(new Uint8Array([0x5b, 0xff, 0x5d]), "application/json", false)).toEqual({ invalid: "Invalid JSON: the body is not UTF-8" });
  });

  test("an append's JSON body crosses to the Stream decoded but not parsed; the Stream's parse is the same one", () => {
    const text = `[{"n":1},"two",[3]]`;
    expect(decodeJsonBody(body(text))).toEqual({ json: text });
    expect(decodeJsonBody(new Uint8Array([0xff]))).toHaveProperty("invalid");
    expect(eventsOfJson(text, false)).toEqual(eventsOfBody(body(text), "application/json", false));
    // More messages than one append holds are cut into appends of APPEND_MAX_EVENTS.
    const many = eventsOfJson(JSON.stringify(Array.from({ length: STREAM_LIMITS.APPEND_MAX_EVENTS + 1 }, (_, i) => i)), false) as { chunks: unknown[][]; count: number };
    expect(many.count).toBe(STREAM_LIMITS.APPEND_MAX_EVENTS + 1);
    expect(many.chunks.map((chunk) => chunk.length)).toEqual([STREAM_LIMITS.APPEND_MAX_EVENTS, 1]);
  });

  test("bytes are kept in chunks: text for UTF-8 text streams, base64 otherwise", () => {
    const bytes = new Uint8Array(LIMITS.STREAMS_HTTP_BYTES_CHUNK + 1).fill(0xff);
    expect(eventsOfBody(bytes, "application/octet-stream", false)).toMatchObject({ count: 2 });
    const text = eventsOfBody(new TextEncoder().encode("héllo"), "text/plain", false) as { chunks: string[] };
    expect(JSON.parse(text.chunks[0] ?? "")[0].payload).toEqual({ text: "héllo" });
  });
});

/** A body whose first byte arrives and whose rest never comes. */
function trickle(): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new Uint8Array([91]));
    },
  });
}

describe("the JSON-mode proof on random bodies", () => {
  test("whatever checkedEventsOfJson proves is valid in full", () => {
    let seed = Number(1234);
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const pick = <T,>(items: T[]): T => items[Math.floor(random() * items.length)] as T;
    const nums = ["1e20", "9e20", "-1e20", "5e-324", "-0", "0", "1e308", "1e309", "1e-400", "1.7976931348623159e308", "1e-7", "1e0100", "1e099", `${"9".repeat(99)}`, `${"9".repeat(100)}`, `${"9".repeat(99)}e99`];
    const strs = ['"a"', '"\\ud83d\\ude00"', '"\\ud800"', '"\\\\ud800"', '"€"', '"😀"', '"\\"[[[["', '"\\u005b"'];
    const keys = ['"k"', '"__proto__"', '""', '"k"', '"\\ud800"'];
    const value = (depth: number, max: number): string => {
      if (depth >= max || random() < 0.35) return random() < 0.5 ? pick(nums) : random() < 0.8 ? pick(strs) : pick(["true", "null"]);
      const items = Array.from({ length: random() < 0.7 ? 1 : 2 }, () => value(depth + 1, max));
      return random() < 0.5 ? `[${items.join(",")}]` : `{${items.map((item) => `${pick(keys)}:${item}`).join(",")}}`;
    };
    const chain = (levels: number, leaf: string): string => {
      let text = leaf;
      for (let i = 0; i < levels; i++) text = random() < 0.5 ? `[${text}]` : `{${pick(keys)}:${text}}`;
      return text;
    };
    const message = () => (random() < 0.3 ? chain(29 + Math.floor(random() * 6), value(0, 1)) : random() < 0.1 ? `"${pick(["x", "€"]).repeat(Math.floor(random() * 20000))}"` : value(0, 5));
    let proven = 0;
    for (let round = 0; round < 3000; round++) {
      const text = random() < 0.7 ? `[${Array.from({ length: 1 + Math.floor(random() * 3) }, message).join(",")}]` : message();
      const parsed = eventsOfJson(text, false);
      if ("invalid" in parsed) continue;
      if (!checked(text)) continue;
      proven++;
      expect(full(text), text).toBe("valid");
    }
    expect(proven).toBeGreaterThan(300);
  });
});
