import { describe, expect, test } from "vitest";
import { LIMITS } from "../limits.ts";
import { LIVE_REQUESTS, LiveRequestGate } from "./live-requests.ts";

describe("STREAMS_HTTP_LIVE_REQUESTS_MAX: live reads one isolate holds open", () => {
  test("a gate admits its maximum, refuses one more, and admits again once one leaves", () => {
    const gate = new LiveRequestGate(3);
    expect([gate.enter(), gate.enter(), gate.enter()]).toEqual([true, true, true]);
    expect(gate.enter()).toBe(false);
    expect(gate.open).toBe(3);
    gate.leave();
    expect(gate.enter()).toBe(true);
    // Leaving more than entered never goes below nothing (a slot is not given twice).
    for (let i = 0; i < 10; i++) gate.leave();
    expect(gate.open).toBe(0);
  });

  test("the route's gate is sized by the limit and holds nothing when idle", () => {
    expect(LIMITS.STREAMS_HTTP_LIVE_REQUESTS_MAX).toBe(10_000);
    expect(LIVE_REQUESTS.open).toBe(0);
  });
});
