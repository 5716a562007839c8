import { describe, expect, it } from "vitest";
import { errorCode } from "../../errors/index.ts";
import { STREAM_LIMITS } from "./limits.ts";
import { validateGetEventsInput, validateWaitForEventInput } from "./validate-read.ts";

function detailsOfThrow(run: () => unknown): { code: unknown; details: unknown } {
  try {
    run();
  } catch (error) {
    return { code: errorCode(error), details: (error as { details?: unknown }).details };
  }
  throw new Error("expected a throw");
}

describe("validateGetEventsInput", () => {
  it.each([
    [undefined, { afterOffset: 0, limit: 100 }],
    [{}, { afterOffset: 0, limit: 100 }],
    [{ afterOffset: 7, limit: 500 }, { afterOffset: 7, limit: 500 }],
    [{ beforeOffset: 3, limit: 1 }, { afterOffset: 0, beforeOffset: 3, limit: 1 }],
    [{ types: ["demo/a", "demo/b"] }, { afterOffset: 0, limit: 100, types: ["demo/a", "demo/b"] }],
  ])("normalises %j", (input, expected) => {
    expect(validateGetEventsInput(input)).toEqual(expected);
  });

  it.each([
    ["a negative afterOffset", { afterOffset: -1 }, { field: "afterOffset" }],
    ["a fractional afterOffset", { afterOffset: 1.5 }, { field: "afterOffset" }],
    ["a string afterOffset", { afterOffset: "3" }, { field: "afterOffset" }],
    ["a negative beforeOffset", { beforeOffset: -2 }, { field: "beforeOffset" }],
    ["limit 0", { limit: 0 }, { limit: "READ_MAX_LIMIT" }],
    ["limit 501", { limit: 501 }, { limit: "READ_MAX_LIMIT" }],
    ["a fractional limit", { limit: 2.5 }, { field: "limit" }],
    ["an empty types list", { types: [] }, { field: "types" }],
    ["65 types (past READ_MAX_TYPES)", { types: Array.from({ length: 65 }, (_, i) => `demo/t${i}`) }, { field: "types", limit: "READ_MAX_TYPES" }],
    ["101 types", { types: Array.from({ length: 101 }, (_, i) => `demo/t${i}`) }, { field: "types", limit: "READ_MAX_TYPES" }],
    ["a bad type in types", { types: ["Bad Type"] }, { field: "type" }],
    ["an unknown field", { after: 3 }, { field: "after" }],
    ["a non-object", 5, {}],
  ])("refuses %s with INVALID_ARGUMENT", (_name, input, details) => {
    const thrown = detailsOfThrow(() => validateGetEventsInput(input));
    expect(thrown.code).toBe("INVALID_ARGUMENT");
    expect(thrown.details).toMatchObject(details);
  });
});

describe("validateWaitForEventInput", () => {
  it.each([
    [{ timeoutMs: 0 }, { timeoutMs: 0, afterOffset: 0 }],
    [
      { type: "demo/a", payload: { requestOffset: 3 }, afterOffset: 2, timeoutMs: 300_000 },
      { type: "demo/a", payload: { requestOffset: 3 }, afterOffset: 2, timeoutMs: 300_000 },
    ],
  ])("normalises %j", (input, expected) => {
    expect(validateWaitForEventInput(input)).toEqual(expected);
  });

  it("takes a payload pattern of exactly WAIT_PATTERN_MAX_BYTES bytes of JSON", () => {
    // {"k":"..."} is 8 bytes around the string.
    const payload = { k: "x".repeat(STREAM_LIMITS.WAIT_PATTERN_MAX_BYTES - 8) };
    expect(validateWaitForEventInput({ timeoutMs: 10, payload }).payload).toEqual(payload);
    expect(detailsOfThrow(() => validateWaitForEventInput({ timeoutMs: 10, payload: { k: `${payload.k}x` } })).details).toMatchObject({ limit: "WAIT_PATTERN_MAX_BYTES" });
  });

  it.each([
    ["a missing timeout", {}, { field: "timeoutMs" }],
    ["a negative timeout", { timeoutMs: -1 }, { field: "timeoutMs" }],
    ["a timeout past the limit", { timeoutMs: 300_001 }, { limit: "WAIT_MAX_TIMEOUT_MS" }],
    ["a negative afterOffset", { timeoutMs: 10, afterOffset: -5 }, { field: "afterOffset" }],
    ["a bad type", { timeoutMs: 10, type: "A B" }, { field: "type" }],
    ["a payload that is a list", { timeoutMs: 10, payload: [1] }, { field: "payload" }],
    ["a payload holding a function", { timeoutMs: 10, payload: { f: () => 0 } }, { field: "payload.f" }],
    ["an unknown field", { timeoutMs: 10, offset: 3 }, { field: "offset" }],
    ["a payload pattern past WAIT_PATTERN_MAX_BYTES", { timeoutMs: 10, payload: { k: "é".repeat(2_045) } }, { limit: "WAIT_PATTERN_MAX_BYTES" }],
    ["undefined", undefined, {}],
  ])("refuses %s with INVALID_ARGUMENT", (_name, input, details) => {
    const thrown = detailsOfThrow(() => validateWaitForEventInput(input));
    expect(thrown.code).toBe("INVALID_ARGUMENT");
    expect(thrown.details).toMatchObject(details);
  });
});

function types(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `demo/t${i}`);
}

describe("READ_MAX_TYPES", () => {
  it("allows exactly READ_MAX_TYPES types in a read or a wait, and refuses one more naming the limit", () => {
    const max = STREAM_LIMITS.READ_MAX_TYPES;
    expect(validateGetEventsInput({ types: types(max) }).types).toHaveLength(max);
    expect(validateWaitForEventInput({ types: types(max), timeoutMs: 0 }).types).toHaveLength(max);
    for (const run of [() => validateGetEventsInput({ types: types(max + 1) }), () => validateWaitForEventInput({ types: types(max + 1), timeoutMs: 0 })]) {
      expect(detailsOfThrow(run)).toEqual({ code: "INVALID_ARGUMENT", details: { field: "types", limit: "READ_MAX_TYPES" } });
    }
  });

  it("refuses a wait whose payload holds a lone surrogate", () => {
    expect(detailsOfThrow(() => validateWaitForEventInput({ timeoutMs: 0, payload: { a: "\ud800" } }))).toEqual({
      code: "INVALID_ARGUMENT",
      details: { field: "payload.a" },
    });
  });
});
