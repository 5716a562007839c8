import { describe, expect, test } from "vitest";
import { RunBudget } from "./run-budget.ts";

describe("RunBudget", () => {
  test("admits a burst of a tenth of the minute's rate, then refills at the rate", () => {
    const budget = new RunBudget(() => 600);
    const start = 1_000_000;
    const admitted = Array.from({ length: 100 }, () => budget.admit(start)).filter(Boolean).length;
    expect(admitted).toBe(RunBudget.burstOf(600));
    expect(budget.admit(start + 50)).toBe(false);
    // 600 a minute: one every 100 ms.
    expect(budget.admit(start + 100)).toBe(true);
    expect(budget.admit(start + 100)).toBe(false);
    // Refilled after a long quiet, never past the burst.
    const later = start + 3_600_000;
    expect(Array.from({ length: 100 }, () => budget.admit(later)).filter(Boolean).length).toBe(60);
  });

  test("a rate under ten a minute still admits one at a time", () => {
    const budget = new RunBudget(() => 2);
    expect(RunBudget.burstOf(2)).toBe(1);
    expect(budget.admit(0)).toBe(true);
    expect(budget.admit(1_000)).toBe(false);
    expect(budget.admit(30_000)).toBe(true);
  });
});
