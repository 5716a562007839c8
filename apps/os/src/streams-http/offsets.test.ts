import { describe, expect, test } from "vitest";
import { formatOffset, parseOffset } from "./offsets.ts";

describe("Durable Streams offsets", () => {
  test("sort as strings in journal order and parse back", () => {
    const offsets = [0, 1, 9, 10, 99, 100, 123_456_789].map(formatOffset);
    expect(offsets.toSorted()).toEqual(offsets);
    expect(parseOffset(formatOffset(42))).toEqual({ after: 42 });
  });

  test("-1 is the start, now is the tail, every other spelling is refused", () => {
    expect(parseOffset("-1")).toEqual({ after: 0 });
    expect(parseOffset("now")).toEqual({ now: true });
    for (const bad of ["", "42", "0_0", "0000000000000001", "0000000000000001_0000000000000002", "../x", "00000000000000a1", " 0000000000000001", "-2", "99999999999999999"]) {
      expect(parseOffset(bad), bad).toBeUndefined();
    }
  });
});
