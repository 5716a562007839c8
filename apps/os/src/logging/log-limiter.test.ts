import { describe, expect, test, vi } from "vitest";
import { ItxError } from "iterate/errors";
import { LOG_LINES_PER_WINDOW, LogLimiter, isClientDisconnect, logUncoded } from "./log-limiter.ts";
import { LIMITS } from "../limits.ts";

function recorder() {
  const lines: unknown[][] = [];
  return { lines, sink: { error: (...args: unknown[]) => lines.push(args) } };
}

describe("the log limiter", () => {
  test(`at most LOG_LINES_PER_WINDOW (${LOG_LINES_PER_WINDOW}) lines per window, then one summary line in the next`, () => {
    const { lines, sink } = recorder();
    let now = 0;
    const limiter = new LogLimiter(sink, () => now);
    for (let i = 0; i < 1000; i++) limiter.error("uncoded error sent over /api", new Error(`boom ${i}`));
    for (let i = 0; i < 5; i++) limiter.error("could not disconnect live capabilities", new Error("x"));
    expect(lines).toHaveLength(LOG_LINES_PER_WINDOW);
    now += LIMITS.LOG_WINDOW_MS;
    limiter.error("later", new Error("y"));
    expect(lines).toHaveLength(LOG_LINES_PER_WINDOW + 2);
    expect(lines[LOG_LINES_PER_WINDOW]).toEqual([
      `suppressed ${1000 - LOG_LINES_PER_WINDOW + 5} similar messages (${1000 - LOG_LINES_PER_WINDOW}× uncoded error sent over /api; 5× could not disconnect live capabilities)`,
    ]);
    expect(lines.at(-1)?.[0]).toBe("later");
    // Nothing suppressed since: no second summary.
    now += LIMITS.LOG_WINDOW_MS;
    limiter.error("quiet", 1);
    expect(lines.at(-1)).toEqual(["quiet", 1]);
    expect(lines.filter((line) => String(line[0]).startsWith("suppressed"))).toHaveLength(1);
  });

  test(`a summary names at most LIMITS.LOG_SUMMARY_KEYS_MAX (${LIMITS.LOG_SUMMARY_KEYS_MAX}) messages and counts the rest together`, () => {
    const { lines, sink } = recorder();
    let now = 0;
    const limiter = new LogLimiter(sink, () => now);
    for (let i = 0; i < LOG_LINES_PER_WINDOW + LIMITS.LOG_SUMMARY_KEYS_MAX + 3; i++) limiter.error(`distinct message ${i}`);
    now += LIMITS.LOG_WINDOW_MS;
    limiter.error("next");
    const summary = String(lines[LOG_LINES_PER_WINDOW]?.[0]);
    expect(summary).toContain(`suppressed ${LIMITS.LOG_SUMMARY_KEYS_MAX + 3} similar messages`);
    expect(summary).toContain("3× other");
    expect(summary.length).toBeLessThan(2000);
  });

  test("client disconnects are told apart from errors of the OS", () => {
    expect(isClientDisconnect(new Error("Peer closed WebSocket: 1006 "))).toBe(true);
    expect(isClientDisconnect(new Error("The execution context which hosts this callback is no longer running."))).toBe(true);
    expect(isClientDisconnect(new ItxError("UNAVAILABLE", "gone", { details: { reason: "client-disconnected" } }))).toBe(true);
    expect(isClientDisconnect(new TypeError("Cannot read properties of undefined"))).toBe(false);
    expect(isClientDisconnect(undefined)).toBe(false);
  });
});

describe("logUncoded", () => {
  test("expected coded errors and client disconnects are not logged; an uncoded error is, with its stack", () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      logUncoded("sent over /api", new ItxError("NOT_FOUND", "no such thing"));
      logUncoded("sent over /api", Object.assign(new Error("[INVALID_ARGUMENT] bad input"), {}));
      logUncoded("sent over /api", new Error("Peer closed WebSocket: 1001 going away"));
      logUncoded("sent over /api", new TypeError("'whoami' is not a function."));
      logUncoded("sent over /api", new TypeError('The RPC receiver does not implement the method "getItx".'));
      expect(spy).not.toHaveBeenCalled();
      const bug = new TypeError("x is undefined");
      logUncoded("sent over /api", bug);
      expect(spy).toHaveBeenCalledWith("sent over /api", bug);
    } finally {
      spy.mockRestore();
    }
  });
});
