import { describe, expect, test } from "vitest";
import { WorkerBuildCache, type BuiltWorker } from "./worker-build.ts";
import { LIMITS } from "../limits.ts";

function built(hash: string, chars: number): BuiltWorker {
  return { mainModule: "index.js", modules: { "index.js": "x".repeat(chars) }, hash };
}

describe("the dynamic-worker build cache is bounded", () => {
  test("it has named bounds", () => {
    expect(LIMITS.WORKER_BUILDS_MAX).toBeGreaterThan(0);
    expect(LIMITS.WORKER_BUILDS_MAX_CHARS).toBeGreaterThan(0);
  });

  test("past its count, the least recently used build is dropped and built again when asked", async () => {
    const cache = new WorkerBuildCache(3, 1_000_000);
    const made: string[] = [];
    const get = (hash: string) =>
      cache.get(hash, async () => {
        made.push(hash);
        return built(hash, 10);
      });
    for (const hash of ["a", "b", "c"]) await get(hash);
    await get("a"); // a is now the most recent
    await get("d"); // evicts b
    expect(cache.size).toBe(3);
    await get("a");
    await get("c");
    expect(made).toEqual(["a", "b", "c", "d"]);
    await get("b");
    expect(made).toEqual(["a", "b", "c", "d", "b"]);
    expect(cache.size).toBe(3);
  });

  test("past its size, old builds go until the modules held fit", async () => {
    const cache = new WorkerBuildCache(100, 250);
    for (const hash of ["a", "b", "c", "d"]) await cache.get(hash, async () => built(hash, 100));
    await Promise.resolve();
    expect(cache.chars).toBeLessThanOrEqual(250);
    expect(cache.size).toBe(2);
    // A single build bigger than the whole bound is answered but not kept.
    const huge = await cache.get("huge", async () => built("huge", 1_000));
    expect(huge.hash).toBe("huge");
    await Promise.resolve();
    expect(cache.chars).toBeLessThanOrEqual(250);
    expect(cache.size).toBe(2);
  });

  test("a failed build is forgotten, so the next request builds again", async () => {
    const cache = new WorkerBuildCache(4, 1_000);
    let attempts = 0;
    const make = async () => {
      attempts += 1;
      if (attempts === 1) throw new Error("did not build");
      return built("a", 1);
    };
    await expect(cache.get("a", make)).rejects.toThrow(/did not build/);
    expect(cache.size).toBe(0);
    expect((await cache.get("a", make)).hash).toBe("a");
    expect(attempts).toBe(2);
  });
});
