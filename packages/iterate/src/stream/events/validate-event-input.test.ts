import { describe, expect, it } from "vitest";
import { errorCode } from "../../errors/index.ts";
import { STREAM_LIMITS } from "./limits.ts";
import { validateAppendBatch, validateAppendText, validateEventInput } from "./validate-event-input.ts";

function thrownBy(run: () => unknown): { code: unknown; message: string; details: Record<string, unknown> } {
  try {
    run();
  } catch (error) {
    const { message, details } = error as { message: string; details?: Record<string, unknown> };
    return { code: errorCode(error), message, details: details ?? {} };
  }
  throw new Error("expected a throw");
}

function nested(depth: number): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < depth; i++) value = { inner: value };
  return value;
}

describe("validateEventInput accepts and normalises", () => {
  it.each([
    [{ type: "demo/ping" }, { type: "demo/ping", payload: {} }],
    [{ type: "demo/ping", payload: null }, { type: "demo/ping", payload: null }],
    [{ type: "demo/ping", payload: { a: 1, gone: undefined } }, { type: "demo/ping", payload: { a: 1 } }],
    [{ type: "demo/ping", ephemeral: false }, { type: "demo/ping", payload: {} }],
    [{ type: "demo/ping", ephemeral: true }, { type: "demo/ping", payload: {}, ephemeral: true }],
    [{ type: "demo/ping", idempotencyKey: "k1" }, { type: "demo/ping", payload: {}, idempotencyKey: "k1" }],
    [
      { type: "demo/ping", source: { processor: "greeter", origin: undefined } },
      { type: "demo/ping", payload: {}, source: { processor: "greeter" } },
    ],
    [{ type: "demo/ping", payload: nested(31) }, { type: "demo/ping", payload: nested(31) }],
    [{ type: "demo/ping", payload: [1, "two", true, null, { x: -0.5 }] }, { type: "demo/ping", payload: [1, "two", true, null, { x: -0.5 }] }],
  ])("%j", (input, expected) => {
    expect(validateEventInput(input)).toEqual(expected);
  });

  it("stores a copy, so mutating the caller's object afterwards changes nothing", () => {
    const payload = { list: [1, 2] };
    const event = validateEventInput({ type: "demo/ping", payload });
    payload.list.push(3);
    expect(event.payload).toEqual({ list: [1, 2] });
  });

  it("keeps a __proto__ key as data", () => {
    const payload = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
    const event = validateEventInput({ type: "demo/ping", payload });
    expect(Object.keys(event.payload as object)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("validateEventInput refuses with INVALID_ARGUMENT", () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const sparse: unknown[] = [1];
  sparse[2] = 3;

  it.each([
    ["not an object", "demo/ping", {}, /plain object/],
    ["an array", [{ type: "demo/ping" }], {}, /plain object/],
    ["an unknown field", { type: "demo/ping", colour: "red" }, { field: "colour" }, /unknown field "colour"/],
    ["a missing type", { payload: {} }, { field: "type" }, /must be a string/],
    ["a bad type", { type: "Demo Ping" }, { field: "type" }, /lowercase/],
    ["a platform type with three segments", { type: "events.iterate.com/a/b/c" }, { field: "type" }, /two segments/], // invalid on purpose
    ["a function in the payload", { type: "demo/ping", payload: { f: () => 1 } }, { field: "payload.f" }, /function/],
    ["a Date in the payload", { type: "demo/ping", payload: { at: new Date(0) } }, { field: "payload.at" }, /Date/],
    ["a Map payload", { type: "demo/ping", payload: new Map() }, { field: "payload" }, /Map/],
    ["NaN", { type: "demo/ping", payload: { n: Number.NaN } }, { field: "payload.n" }, /finite/],
    ["Infinity", { type: "demo/ping", payload: [Infinity] }, { field: "payload[0]" }, /finite/],
    ["a bigint", { type: "demo/ping", payload: { n: 1n } }, { field: "payload.n" }, /bigint/],
    ["undefined in an array", { type: "demo/ping", payload: [undefined] }, { field: "payload[0]" }, /undefined/],
    ["a sparse array", { type: "demo/ping", payload: sparse }, { field: "payload[1]" }, /sparse/],
    ["a payload nested too deep", { type: "demo/ping", payload: nested(33) }, { limit: "PAYLOAD_MAX_DEPTH" }, /deeper than 32/],
    ["a cyclic payload", { type: "demo/ping", payload: cyclic }, { limit: "PAYLOAD_MAX_DEPTH" }, /deeper/],
    [
      "an oversized payload",
      { type: "demo/ping", payload: { blob: "x".repeat(STREAM_LIMITS.EVENT_MAX_BYTES) } },
      { limit: "EVENT_MAX_BYTES" },
      /at most 262144 bytes/,
    ],
    ["an empty idempotency key", { type: "demo/ping", idempotencyKey: "" }, { field: "idempotencyKey" }, /non-empty/],
    ["a numeric idempotency key", { type: "demo/ping", idempotencyKey: 5 }, { field: "idempotencyKey" }, /string/],
    [
      "a long idempotency key",
      { type: "demo/ping", idempotencyKey: "k".repeat(513) },
      { limit: "IDEMPOTENCY_KEY_MAX_LENGTH" },
      /at most 512/,
    ],
    ["a keyed ephemeral event", { type: "demo/ping", ephemeral: true, idempotencyKey: "k" }, {}, /ephemeral/],
    ["a string ephemeral flag", { type: "demo/ping", ephemeral: "yes" }, { field: "ephemeral" }, /boolean/],
    ["a source that is not an object", { type: "demo/ping", source: "me" }, { field: "source" }, /plain object/],
    ["an unknown source field", { type: "demo/ping", source: { actor: "x" } }, { field: "source.actor" }, /unknown/],
    ["a numeric source field", { type: "demo/ping", source: { origin: 1 } }, { field: "source.origin" }, /string/],
  ])("%s", (_name, input, details, message) => {
    const error = thrownBy(() => validateEventInput(input));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.details).toMatchObject(details);
    expect(error.message).toMatch(message);
    // Checked in place (an owned batch), the same input gets the same refusal.
    const owned = thrownBy(() => validateAppendBatch([input], { owned: true }));
    expect(owned.code).toBe("INVALID_ARGUMENT");
    expect(owned.details).toMatchObject({ ...details, index: 0 });
    expect(owned.message).toMatch(message);
  });

  it("counts bytes of UTF-8, not characters", () => {
    // 100,000 three-byte characters: 300,000 bytes, under the limit in characters but over it in bytes.
    const error = thrownBy(() => validateEventInput({ type: "demo/ping", payload: "€".repeat(100_000) }));
    expect(error.details).toMatchObject({ limit: "EVENT_MAX_BYTES" });
  });
});

describe("validateAppendBatch", () => {
  it("returns every event normalised, in order", () => {
    expect(validateAppendBatch([{ type: "demo/a" }, { type: "demo/b", payload: 1 }])).toEqual([
      { type: "demo/a", payload: {} },
      { type: "demo/b", payload: 1 },
    ]);
  });

  it("accepts exactly APPEND_MAX_EVENTS events", () => {
    const batch = Array.from({ length: STREAM_LIMITS.APPEND_MAX_EVENTS }, () => ({ type: "demo/a" }));
    expect(validateAppendBatch(batch)).toHaveLength(500);
  });

  it("counts the batch's bytes of UTF-8 once characters alone cannot prove it fits", () => {
    // 80,000 three-byte characters per event: 240,021 bytes each, under EVENT_MAX_BYTES.
    const euros = { type: "demo/a", payload: "€".repeat(80_000) };
    const bytes = 80_000 * 3 + JSON.stringify({ type: "demo/a", payload: "" }).length;
    // Four fit (960,084 bytes); five are 1,200,105 bytes, past APPEND_MAX_BYTES only in bytes.
    expect(validateAppendBatch([euros, euros, euros, euros])).toHaveLength(4);
    const error = thrownBy(() => validateAppendBatch([euros, euros, euros, euros, euros]));
    expect(error.details).toMatchObject({ limit: "APPEND_MAX_BYTES" });
    expect(error.message).toContain(`got ${5 * bytes}`);
  });

  const big = { type: "demo/a", payload: "x".repeat(200_000) };
  it.each([
    ["not a list", { type: "demo/a" }, {}],
    ["an empty list", [], {}],
    ["too many events", Array.from({ length: 501 }, () => ({ type: "demo/a" })), { limit: "APPEND_MAX_EVENTS" }],
    ["too many bytes together", [big, big, big, big, big, big], { limit: "APPEND_MAX_BYTES" }],
    ["one bad event, named by index", [{ type: "demo/a" }, { type: "demo/a", extra: 1 }], { index: 1, field: "extra" }],
    [
      "one oversized event, named by index and limit",
      [{ type: "demo/a", payload: "x".repeat(300_000) }],
      { index: 0, limit: "EVENT_MAX_BYTES" },
    ],
  ])("refuses %s with INVALID_ARGUMENT", (_name, inputs, details) => {
    const error = thrownBy(() => validateAppendBatch(inputs));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.details).toMatchObject(details);
  });

  it("prefixes the message of a bad event with its position", () => {
    expect(thrownBy(() => validateAppendBatch([{ type: "demo/a" }, { type: "" }])).message).toMatch(/event 1: /);
  });
});

describe("lone surrogates are refused at append, so every reader reads back the same strings", () => {
  it.each([
    ["a lone high surrogate in a payload string", { type: "demo/ping", payload: { text: "a\ud800b" } }, "payload.text"],
    ["a lone low surrogate at the end", { type: "demo/ping", payload: { text: "ok\udc00" } }, "payload.text"],
    ["a lone surrogate deep in an array", { type: "demo/ping", payload: { list: ["fine", ["\udbff"]] } }, "payload.list[1][0]"],
    ["a lone surrogate in a payload key", { type: "demo/ping", payload: { ["k\ud800"]: 1 } }, "payload key"],
    ["a lone surrogate in an idempotency key", { type: "demo/ping", idempotencyKey: "key-\udfff" }, "idempotencyKey"],
    ["a lone surrogate in a source field", { type: "demo/ping", source: { origin: "/\ud800" } }, "source.origin"],
    ["a lone surrogate in the type", { type: "demo/\ud800" }, "type"],
  ])("%s", (_name, input, field) => {
    const thrown = thrownBy(() => validateEventInput(input));
    expect(thrown.code).toBe("INVALID_ARGUMENT");
    expect(String(thrown.details.field)).toContain(field);
  });

  it("well-formed pairs (emoji, astral characters) are kept as sent", () => {
    const payload = { text: "😀 𝄞 é", ["ключ😀"]: "✓" };
    expect(validateEventInput({ type: "demo/ping", payload }).payload).toEqual(payload);
  });
});

describe("owned batches are checked in place", () => {
  it("keeps the caller's payload object, drops keys whose value is undefined, and stores what a copy would", () => {
    const payload: Record<string, unknown> = { a: 1, gone: undefined, list: [{ b: "x", c: undefined }] };
    const [event] = validateAppendBatch([{ type: "demo/a", payload }], { owned: true });
    expect(event?.payload).toBe(payload);
    expect(JSON.stringify(event?.payload)).toBe(JSON.stringify(validateEventInput({ type: "demo/a", payload: { a: 1, list: [{ b: "x" }] } }).payload));
    expect(Object.keys(payload)).toEqual(["a", "list"]);
  });

  it("a copy keeps a __proto__ key as an ordinary key, not as the prototype", () => {
    const payload = JSON.parse('{"__proto__":{"polluted":true},"n":1}') as Record<string, unknown>;
    const copied = validateEventInput({ type: "demo/a", payload }).payload as Record<string, unknown>;
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(Object.hasOwn(copied, "__proto__")).toBe(true);
    expect(JSON.stringify(copied)).toBe('{"__proto__":{"polluted":true},"n":1}');
  });

  it("an unowned batch is copied: changing the input afterwards changes nothing validated", () => {
    const payload = { n: 1 };
    const [event] = validateAppendBatch([{ type: "demo/a", payload }]);
    payload.n = 2;
    expect(event?.payload).toEqual({ n: 1 });
  });
});

describe("event types are checked every time", () => {
  it("a type that passed once still passes, a bad one is refused each time, past the remembered set's bound", () => {
    for (let i = 0; i < 1_100; i++) validateEventInput({ type: `demo/t${i}` });
    expect(validateEventInput({ type: "demo/t0" }).type).toBe("demo/t0");
    for (let i = 0; i < 2; i++) expect(thrownBy(() => validateEventInput({ type: "events.iterate.com/a/b/c" })).code).toBe("INVALID_ARGUMENT"); // invalid on purpose
  });
});

/** What a check answers: its value, or its error's code, message and details. */
function verdict(run: () => unknown): unknown {
  try {
    return { ok: run() };
  } catch (error) {
    const { message, details } = error as { message: string; details?: unknown };
    return { code: errorCode(error), message, details };
  }
}

/** validateAppendText must answer what the whole checks answer on the same inputs. */
function sameAsFull(text: string): void {
  expect(verdict(() => validateAppendText(text)), text).toEqual(verdict(() => validateAppendBatch(JSON.parse(text), { owned: true })));
}

describe("validateAppendText: an append written as JSON text", () => {

  it("answers what the full checks answer when the text proves its payloads (every field of an input still checked)", () => {
    for (const text of [
      '[{"type":"demo/ping"},{"type":"demo/pong","payload":{"n":1,"s":"a \\"quoted\\" line","l":[1e20,-0,null,true]}}]',
      '[{"type":"demo/k","payload":1,"idempotencyKey":"k-1"},{"type":"demo/e","ephemeral":true},{"type":"demo/f","ephemeral":false}]',
      '[{"type":"demo/s","source":{"processor":"p","reaction":{"began":"x","round":1}}}]',
      '[{"type":"demo/p","payload":{"__proto__":{"polluted":true}}}]',
      `[{"type":"demo/deep","payload":${"[".repeat(STREAM_LIMITS.PAYLOAD_MAX_DEPTH)}${"]".repeat(STREAM_LIMITS.PAYLOAD_MAX_DEPTH)}}]`,
      // Refused for what the proof does not cover: fields, types, keys, sources, counts.
      '[{"type":"demo/x","colour":"red"}]',
      '[{"type":"Not A Type"}]',
      '[{"type":"demo/k","idempotencyKey":""}]',
      '[{"type":"demo/k","ephemeral":true,"idempotencyKey":"k"}]',
      '[{"type":"demo/k","ephemeral":"yes"}]',
      '[{"type":"demo/s","source":{"who":"me"}}]',
      '[{"type":"demo/s","source":{"reaction":{"began":1}}}]',
      "[]",
      '{"type":"demo/not-a-list"}',
      "[1]",
      `[${Array.from({ length: STREAM_LIMITS.APPEND_MAX_EVENTS + 1 }, () => '{"type":"demo/x"}').join(",")}]`,
    ]) {
      sameAsFull(text);
    }
    expect(validateAppendText('[{"type":"demo/ping"}]')).toEqual([{ type: "demo/ping", payload: {} }]);
  });

  it("falls back to the full checks for each reason the text cannot prove, with their verdict", () => {
    const big = "x".repeat(Math.ceil(STREAM_LIMITS.EVENT_MAX_BYTES / 18));
    for (const text of [
      '[{"type":"demo/x","payload":"\\ud800"}]',
      '[{"type":"demo/x","payload":"\\ud83d\\ude00"}]',
      '[{"type":"demo/x","payload":1e400}]',
      `[{"type":"demo/x","payload":${"9".repeat(310)}}]`,
      `[{"type":"demo/x","payload":${"[".repeat(STREAM_LIMITS.PAYLOAD_MAX_DEPTH + 1)}${"]".repeat(STREAM_LIMITS.PAYLOAD_MAX_DEPTH + 1)}}]`,
      // Too long to prove by the bound, valid in full; and one event past EVENT_MAX_BYTES.
      `[{"type":"demo/x","payload":"${big}"}]`,
      `[{"type":"demo/x","payload":"${"y".repeat(STREAM_LIMITS.EVENT_MAX_BYTES)}"}]`,
    ]) {
      sameAsFull(text);
    }
    expect(validateAppendText(`[{"type":"demo/x","payload":"${big}"}]`)).toHaveLength(1);
  });

  it(`refuses text over APPEND_MAX_BYTES (${STREAM_LIMITS.APPEND_MAX_BYTES}) before parsing it, and text that is not JSON`, () => {
    expect(thrownBy(() => validateAppendText(" ".repeat(STREAM_LIMITS.APPEND_MAX_BYTES + 1))).details).toEqual({ limit: "APPEND_MAX_BYTES" });
    expect(thrownBy(() => validateAppendText("[{")).message).toContain("not a JSON array of event inputs");
    // The one place the verdict differs from the full checks: those measure the events, not the text.
    const padded = `[{"type":"demo/x"}${" ".repeat(STREAM_LIMITS.APPEND_MAX_BYTES)}]`;
    expect(thrownBy(() => validateAppendText(padded)).details).toEqual({ limit: "APPEND_MAX_BYTES" });
    expect(validateAppendBatch(JSON.parse(padded), { owned: true })).toEqual([{ type: "demo/x", payload: {} }]);
  });

  it("agrees with the full checks on random appends", () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)] as T;
    const atoms = ["1", "-2.5", "1e20", "1e308", "1e309", "0.1e-400", '"a"', '"\\u00e9"', '"\\udc00"', "true", "null", '"\\n"'];
    const value = (depth: number): string =>
      depth > 34 || random() < 0.4 ? pick(atoms) : random() < 0.5 ? `[${value(depth + 1)},${value(depth + 1)}]` : `{"k${Math.floor(random() * 3)}":${value(depth + 1)}}`;
    const outcomes = { ok: 0, refused: 0 };
    for (let round = 0; round < 400; round++) {
      const inputs = Array.from({ length: 1 + Math.floor(random() * 4) }, () => {
        const fields = [`"type":"${pick(["demo/x", "demo/y", "Bad Type"])}"`];
        if (random() < 0.8) fields.push(`"payload":${value(random() < 0.1 ? 30 : 0)}`);
        if (random() < 0.1) fields.push(`"idempotencyKey":${pick(['"k"', '""', "1"])}`);
        if (random() < 0.1) fields.push(`"ephemeral":${pick(["true", "false", "1"])}`);
        return `{${fields.join(",")}}`;
      });
      const text = `[${inputs.join(",")}]`;
      sameAsFull(text);
      outcomes[Object.hasOwn(verdict(() => validateAppendText(text)) as object, "ok") ? "ok" : "refused"] += 1;
    }
    // Both verdicts are exercised, not one of them 400 times.
    expect(outcomes.ok).toBeGreaterThan(40);
    expect(outcomes.refused).toBeGreaterThan(40);
  });
});
