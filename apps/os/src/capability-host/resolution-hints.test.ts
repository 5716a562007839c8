import { describe, expect, test } from "vitest";
import { ResolutionHints } from "./resolution-hints.ts";
import { LIMITS } from "../limits.ts";

describe("resolution hints", () => {
  test("a remembered owner (or none) is answered until it expires", () => {
    const hints = new ResolutionHints();
    hints.remember("a", "/", hints.generation, 1_000);
    hints.remember("b", null, hints.generation, 1_000);
    expect(hints.get("a", 1_000)).toBe("/");
    expect(hints.get("b", 1_000)).toBeNull();
    expect(hints.get("c", 1_000)).toBeUndefined();
    expect(hints.get("a", 1_000 + LIMITS.RESOLUTION_HINT_TTL_MS + 1)).toBeUndefined();
  });

  test("an answer that a forget overtook is not kept", () => {
    const hints = new ResolutionHints();
    const before = hints.generation;
    hints.forgetAll();
    hints.remember("a", "/", before);
    expect(hints.get("a")).toBeUndefined();
    hints.remember("a", "/x", hints.generation);
    expect(hints.get("a")).toBe("/x");
    hints.forgetAll();
    expect(hints.get("a")).toBeUndefined();
  });

  test("RESOLUTION_HINTS_MAX bounds what one context remembers, the oldest going first", () => {
    const hints = new ResolutionHints();
    for (let index = 0; index <= LIMITS.RESOLUTION_HINTS_MAX; index++) hints.remember(`p${index}`, "/", hints.generation);
    expect(hints.size).toBe(LIMITS.RESOLUTION_HINTS_MAX);
    expect(hints.get("p0")).toBeUndefined();
    expect(hints.get(`p${LIMITS.RESOLUTION_HINTS_MAX}`)).toBe("/");
  });
});
