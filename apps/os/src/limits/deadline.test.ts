import { describe, expect, test } from "vitest";
import { raceDeadline } from "./deadline.ts";

const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe("raceDeadline", () => {
  test("answers the work when it settles first, its failure included", async () => {
    expect(await raceDeadline(Promise.resolve("done"), 1_000, () => "late")).toBe("done");
    await expect(raceDeadline(Promise.reject(new Error("broke")), 1_000, () => "late")).rejects.toThrow("broke");
  });

  test("answers late() once the deadline passes first; a late() that throws rejects", async () => {
    expect(await raceDeadline(after(1_000, "done"), 10, () => "late")).toBe("late");
    await expect(
      raceDeadline(after(1_000, "done"), 10, () => {
        throw new Error("past the deadline");
      }),
    ).rejects.toThrow("past the deadline");
  });

  test("a negative deadline is an immediate one", async () => {
    expect(await raceDeadline(after(1_000, "done"), -5, () => "late")).toBe("late");
  });
});
