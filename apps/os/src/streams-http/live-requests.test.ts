import { describe, expect, test } from "vitest";
import { LIMITS } from "../limits.ts";
import { LIVE_REQUESTS, LiveRequestGate } from "./live-requests.ts";

describe("STREAMS_HTTP_LIVE_REQUESTS_MAX: live reads one isolate holds open", () => {
  test("a gate admits its maximum, refuses one more, and admits again once one leaves", () => {
    const gate = new LiveRequestGate(3, 3);
    expect([gate.enter("a"), gate.enter("b"), gate.enter("a")]).toEqual([true, true, true]);
    expect(gate.enter("c")).toBe(false);
    expect(gate.open).toBe(3);
    gate.leave("a");
    expect(gate.enter("c")).toBe(true);
    // Leaving more than entered never goes below nothing (a slot is not given twice).
    for (let i = 0; i < 10; i++) for (const caller of ["a", "b", "c"]) gate.leave(caller);
    expect(gate.open).toBe(0);
  });

  test("the route's gate is sized by the limits and holds nothing when idle", () => {
    expect(LIMITS.STREAMS_HTTP_LIVE_REQUESTS_MAX).toBe(10_000);
    expect(LIMITS.STREAMS_HTTP_LIVE_REQUESTS_PER_CALLER_MAX).toBe(1_000);
    expect(LIVE_REQUESTS.open).toBe(0);
  });

  test("STREAMS_HTTP_LIVE_REQUESTS_PER_CALLER_MAX: one caller cannot hold the whole isolate's slots; others still get theirs", () => {
    const gate = new LiveRequestGate(5, 2);
    expect([gate.enter("mallory"), gate.enter("mallory"), gate.enter("mallory")]).toEqual([true, true, false]);
    expect(gate.refusal).toBe("STREAMS_HTTP_LIVE_REQUESTS_PER_CALLER_MAX");
    expect([gate.enter("alice"), gate.enter("bob"), gate.enter("bob")]).toEqual([true, true, true]);
    expect(gate.enter("carol")).toBe(false);
    expect(gate.refusal).toBe("STREAMS_HTTP_LIVE_REQUESTS_MAX");
    gate.leave("mallory");
    expect(gate.enter("mallory")).toBe(true);
    // A caller leaving more than it entered gives nobody else's slot back.
    for (let i = 0; i < 10; i++) gate.leave("alice");
    expect(gate.open).toBe(4);
    expect(gate.enter("alice")).toBe(true);
  });
});
