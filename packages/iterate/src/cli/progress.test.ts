import { afterEach, expect, test, vi } from "vitest";
import { PROGRESS_AFTER_MS, withProgress } from "./progress.ts";

afterEach(() => vi.useRealTimers());

test("a terminal sees a spinner with the label once a call takes longer than PROGRESS_AFTER_MS, erased at the end", async () => {
  vi.useFakeTimers();
  let written = "";
  const sink = { isTTY: true, write: (text: string) => (written += text) };
  const pending = Promise.withResolvers<number>();
  const work = withProgress(sink, "waiting for the agent", pending.promise);
  await vi.advanceTimersByTimeAsync(PROGRESS_AFTER_MS - 10);
  expect(written).toBe("");
  await vi.advanceTimersByTimeAsync(250);
  expect(written).toContain("waiting for the agent (1.");
  pending.resolve(7);
  expect(await work).toBe(7);
  expect(written.endsWith("\r\x1b[2K")).toBe(true);
});

test("a pipe sees nothing, and quick calls show nothing on a terminal either", async () => {
  let written = "";
  const write = (text: string) => (written += text);
  expect(await withProgress({ isTTY: false, write }, "x", new Promise((done) => setTimeout(() => done(1), 5)))).toBe(1);
  expect(await withProgress({ isTTY: true, write }, "x", Promise.resolve(2))).toBe(2);
  expect(written).toBe("");
});
