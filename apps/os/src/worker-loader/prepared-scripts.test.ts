import { describe, expect, test } from "vitest";
import { PreparedScripts } from "./prepared-scripts.ts";

describe("prepared scripts", () => {
  test("a script run again reuses its preparation; another source gets its own", async () => {
    const scripts = new PreparedScripts();
    const first = await scripts.prepare("async (itx) => { for (;;) {} }");
    expect(first.ok && first.module).toMatch(/__iterateLoopGuard_\w+\(\)/);
    expect(await scripts.prepare("async (itx) => { for (;;) {} }")).toBe(first);
    const other = await scripts.prepare("async (itx) => 2");
    expect(other.ok && first.ok && other.hash !== first.hash).toBe(true);
  });

  test("a source asked for twice at once is prepared once (itx.run starts it beside its append)", async () => {
    const scripts = new PreparedScripts();
    const source = "async (itx) => 3";
    const [a, b] = await Promise.all([scripts.prepare(source), scripts.prepare(source)]);
    expect(a.ok).toBe(true);
    expect(b).toBe(a);
  });

  test("a syntax error is remembered with the line it names", async () => {
    const scripts = new PreparedScripts();
    const broken = await scripts.prepare("async (itx) => {\n  return 1 +* 2;\n}");
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.message).toMatch(/SyntaxError: .* at line 2, column \d+ of the script/);
  });

  test("past its bound the least recently used scripts are forgotten", async () => {
    const scripts = new PreparedScripts(6_000);
    const sources = Array.from({ length: 8 }, (_, i) => `async () => ${i} /* ${"x".repeat(400)} */`);
    const first = await scripts.prepare(sources[0] as string);
    for (const source of sources.slice(1)) {
      await scripts.prepare(source);
      await scripts.prepare(sources[0] as string); // keeps the first one in use
    }
    expect(scripts.chars).toBeLessThanOrEqual(6_000);
    expect(await scripts.prepare(sources[0] as string)).toBe(first);
    const second = await scripts.prepare(sources[1] as string);
    expect(await scripts.prepare(sources[1] as string)).toBe(second);
    // Too big to keep at all: prepared, but not held.
    const huge = `async () => "${"y".repeat(7_000)}"`;
    expect((await scripts.prepare(huge)).ok).toBe(true);
    expect(scripts.chars).toBeLessThanOrEqual(6_000);
  });
});
