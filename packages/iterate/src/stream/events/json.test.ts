import { describe, expect, it } from "vitest";
import { matchesPayload, sameEventBody, stableJson, utf8ByteLength, utf8FitsIn } from "./json.ts";

describe("stableJson", () => {
  it.each([
    [{ b: 1, a: 2 }, '{"a":2,"b":1}'],
    [{ z: { y: 1, x: [3, { q: 1, p: 2 }] } }, '{"z":{"x":[3,{"p":2,"q":1}],"y":1}}'],
    [{ a: undefined, b: null }, '{"b":null}'],
    [[undefined, 1], "[null,1]"],
    [undefined, "null"],
    ["text", '"text"'],
  ])("%j -> %s", (value, expected) => {
    expect(stableJson(value)).toBe(expected);
  });
});

describe("sameEventBody", () => {
  it.each([
    [{ type: "demo/a", payload: { x: 1, y: 2 } }, { type: "demo/a", payload: { y: 2, x: 1 } }, true],
    [{ type: "demo/a", payload: { x: 1, gone: undefined } }, { type: "demo/a", payload: { x: 1 } }, true],
    [{ type: "demo/a" }, { type: "demo/a", payload: {} }, true],
    [{ type: "demo/a", ephemeral: false }, { type: "demo/a" }, true],
    [{ type: "demo/a", payload: { x: 1 } }, { type: "demo/a", payload: { x: 2 } }, false],
    [{ type: "demo/a" }, { type: "demo/b" }, false],
    [{ type: "demo/a", ephemeral: true }, { type: "demo/a" }, false],
    [{ type: "demo/a", payload: [1, 2] }, { type: "demo/a", payload: [2, 1] }, false],
  ])("%j vs %j -> %j", (a, b, expected) => {
    expect(sameEventBody(a, b)).toBe(expected);
  });
});

describe("matchesPayload", () => {
  const payload = { requestOffset: 4, status: "succeeded", detail: { attempt: 2, host: "a" }, tags: ["x", "y"] };

  it.each([
    [{}, true],
    [{ requestOffset: 4 }, true],
    [{ requestOffset: 4, status: "succeeded" }, true],
    [{ detail: { attempt: 2 } }, true],
    [{ tags: ["x", "y"] }, true],
    [{ requestOffset: undefined }, true],
    [{ requestOffset: 5 }, false],
    [{ requestOffset: "4" }, false],
    [{ missing: null }, false],
    [{ detail: { attempt: 3 } }, false],
    [{ tags: ["x"] }, false],
    [{ status: { nested: true } }, false],
    [{ detail: { host: "a", attempt: 2 } }, true],
    [{ tags: ["y", "x"] }, false],
    [{ tags: ["x", "y", "z"] }, false],
  ])("%j -> %j", (partial, expected) => {
    expect(matchesPayload(payload, partial)).toBe(expected);
  });

  it("compares a value inside a list whole, as JSON: key order does not matter, an undefined key is absent", () => {
    const listed = { items: [{ a: 1, b: [1, { c: null }] }, 2] };
    expect(matchesPayload(listed, { items: [{ b: [1, { c: null }], a: 1 }, 2] })).toBe(true);
    expect(matchesPayload(listed, { items: [{ a: 1, b: [1, { c: null }], d: undefined }, 2] })).toBe(true);
    expect(matchesPayload(listed, { items: [{ a: 1 }, 2] })).toBe(false);
    expect(matchesPayload(listed, { items: [{ a: 1, b: [1, { c: 0 }] }, 2] })).toBe(false);
    expect(matchesPayload({ n: 0 }, { n: -0 })).toBe(true);
    expect(matchesPayload({ n: "1" }, { n: 1 })).toBe(false);
  });

  it("never matches a payload that is not an object when a key is asked for", () => {
    expect(matchesPayload("text", { a: 1 })).toBe(false);
    expect(matchesPayload(null, { a: 1 })).toBe(false);
  });
});

describe("utf8ByteLength", () => {
  it.each(["", "ascii", "é", "€", "😀", "a\ud800b", "mixed ✓ 😀 text"])("agrees with TextEncoder for %j", (text) => {
    expect(utf8ByteLength(text)).toBe(new TextEncoder().encode(text).length);
  });
});

describe("utf8FitsIn", () => {
  // Every text against every bound from 0 to a little past its size: the shortcuts (3 bytes per
  // unit, 1 byte per unit) and the count in between must agree with the encoder everywhere.
  it.each(["", "ascii", "é", "€€€", "😀😀", "a\ud800b", "mixed ✓ 😀 text", "€".repeat(40)])("agrees with TextEncoder at every bound for %j", (text) => {
    const bytes = new TextEncoder().encode(text).length;
    for (let max = 0; max <= bytes + 4; max++) expect(utf8FitsIn(text, max), `max ${max}`).toBe(bytes <= max);
  });
});
