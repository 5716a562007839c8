import { describe, expect, test } from "vitest";
import { SERIALIZED_GROWTH_MAX, holdsOnlyPayloadValues, jsonDepth } from "./json-text.ts";
import { copyJsonValue } from "./json-value.ts";

describe("what JSON text shows", () => {
  test("jsonDepth counts nesting, skips strings, and stops past the bound", () => {
    expect(jsonDepth('{"a":[1,{"b":2}]}', 10)).toBe(3);
    expect(jsonDepth('{"a":[1,{"b":2}]}')).toBe(3);
    expect(jsonDepth('{"a":"[[[[[\\"[[["}', 10)).toBe(1);
    expect(jsonDepth("[".repeat(1000), 64)).toBe(65);
    expect(jsonDepth("42", 64)).toBe(0);
  });

  test("holdsOnlyPayloadValues: what it accepts parses to values the payload checks accept; each reason to doubt is refused", () => {
    for (const text of ['{"a":[1,-2.5e10,"x",true,null]}', '"😀"', `[${"9".repeat(99)}]`, "[1e99]", '["é\\n\\u0041"]']) {
      expect(holdsOnlyPayloadValues(text), text).toBe(true);
      expect(() => copyJsonValue(JSON.parse(text), "payload"), text).not.toThrow();
    }
    // An escaped surrogate (lone or not), a number that may be infinite, text that is not well-formed.
    for (const text of ['["\\ud83d\\ude00"]', '["\\ud800"]', '["\\uDFFF"]', "[1e400]", "[1E+100]", `[${"9".repeat(310)}]`, '["\ud800"]']) {
      expect(holdsOnlyPayloadValues(text), text).toBe(false);
    }
  });

  test(`SERIALIZED_GROWTH_MAX (${SERIALIZED_GROWTH_MAX}) bounds how much a parsed number grows when written again`, () => {
    for (const text of ["1e20", "1e-7", "5e-324", "1.7976931348623157e308", "1E2", "0.1e1"]) {
      expect(JSON.stringify(JSON.parse(text)).length, text).toBeLessThanOrEqual(SERIALIZED_GROWTH_MAX * text.length);
    }
  });
});
