import { describe, expect, test } from "vitest";
import { shouldRecordWoken, type WokenInputs } from "./stream-woken.ts";

const base: WokenInputs = { path: "/", head: 40, projectCreated: true, last: null, lastDelivered: false, now: 1_000_000, coalesceMs: 300_000 };

describe("when a new incarnation records stream/woken", () => {
  test.each<[string, Partial<WokenInputs>, boolean]>([
    ["a created project's root, never woken before", {}, true],
    ["a root whose project has no worker yet (creation runs in this incarnation)", { projectCreated: false }, false],
    ["a stream that is not the root", { path: "/agents/a" }, false],
    ["the last woken was delivered", { last: { offset: 30, at: 999_000 }, lastDelivered: true }, true],
    ["the last woken still waits for the worker (a crash loop coalesces into it)", { last: { offset: 30, at: 999_000 } }, false],
    ["the last woken waited past the coalescing window", { last: { offset: 30, at: 1_000_000 - 300_000 } }, true],
    ["the remembered woken is past the head (the journal was replaced)", { last: { offset: 41, at: 999_000 } }, true],
  ])("%s -> %j", (_case, change, expected) => {
    expect(shouldRecordWoken({ ...base, ...change })).toBe(expected);
  });
});
