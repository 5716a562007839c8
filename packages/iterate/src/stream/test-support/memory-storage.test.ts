import { describe, expect, it } from "vitest";
import { checkpointKey, claimKey } from "../processor/host.ts";
import { fakeClock } from "./fake-clock.ts";
import { memoryStorage } from "./memory-storage.ts";

describe("memoryStorage", () => {
  it("clones on the way in and out, as Durable Object storage does", async () => {
    const storage = memoryStorage();
    const value = { list: [1] };
    await storage.put("k", value);
    value.list.push(2);
    const read = (await storage.get("k")) as { list: number[] };
    read.list.push(3);
    expect(await storage.get("k")).toEqual({ list: [1] });
  });

  it("lists by prefix in key order, deletes, and counts checkpoint writes", async () => {
    const storage = memoryStorage();
    await storage.put(claimKey("jobs", "b"), 2);
    await storage.put(claimKey("jobs", "a"), 1);
    await storage.put(claimKey("other", "a"), 3);
    await storage.put(checkpointKey("jobs"), { offset: 1 });
    await storage.put(checkpointKey("jobs"), { offset: 2 });

    expect([...(await storage.list({ prefix: "processor/jobs/claim/" })).entries()]).toEqual([
      ["processor/jobs/claim/a", 1],
      ["processor/jobs/claim/b", 2],
    ]);
    expect(storage.checkpointWrites("jobs")).toBe(2);
    expect(storage.checkpoint("jobs")).toEqual({ offset: 2 });
    expect(storage.deleteCheckpoint("jobs")).toBe(true);
    expect(storage.checkpoint("jobs")).toBeUndefined();
    expect(await storage.delete("missing")).toBe(false);
  });
});

describe("fakeClock", () => {
  it("moves time forward on sleep, at once, and remembers every sleep", async () => {
    const clock = fakeClock(1_000);
    await clock.sleep(250);
    clock.advance(50);
    await clock.sleep(100);
    expect(clock.now()).toBe(1_400);
    expect(clock.sleeps).toEqual([250, 100]);
  });
});
