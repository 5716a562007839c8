import { describe, expect, test } from "vitest";
import { errorCode } from "iterate/errors";
import { LIMITS } from "../limits.ts";
import { guardLoops } from "./loop-guard.ts";

/** Characters copied by String.prototype.slice while `work` runs: the work of splicing a source. */
function charactersSliced(work: () => unknown): number {
  const original = String.prototype.slice;
  let copied = 0;
  // Counting what the real slice copies needs the real slice wrapped; it is put back in `finally`.
  // oxlint-disable-next-line no-extend-native
  String.prototype.slice = function slice(this: string, ...args: Parameters<typeof original>) {
    const piece = original.apply(this, args);
    copied += piece.length;
    return piece;
  };
  try {
    work();
  } finally {
    // oxlint-disable-next-line no-extend-native
    String.prototype.slice = original;
  }
  return copied;
}

describe("loop guard", () => {
  test.each([
    ["for (;;) {}", "for (;;) { g();}"],
    ["while (true) x++", "while (true) { g(); x++ }"],
    ["do { x() } while (y)", "do { g(); x() } while (y)"],
    ["for (const a of b) for (const c in a) f(c)", "for (const a of b) { g(); for (const c in a) { g(); f(c) } }"],
  ])("%s", (body, expected) => {
    expect(guardLoops(`async () => { ${body} }`, "g")).toBe(`async () => { ${expected} }`);
  });

  test("a script without loops is unchanged", () => {
    const source = "async (itx) => (await itx.whoami()).path";
    expect(guardLoops(source, "g")).toBe(source);
  });

  test("a syntax error is SCRIPT_FAILED and names the line", () => {
    let thrown: unknown;
    try {
      guardLoops("async (itx) => {\n  return 1 +* 2;\n}", "g");
    } catch (error) {
      thrown = error;
    }
    expect(errorCode(thrown)).toBe("SCRIPT_FAILED");
    expect((thrown as Error).message).toMatch(/SyntaxError: .* at line 2, column \d+ of the script/);
  });

  test.each([
    ["1); globalThis.loaded = true; (2"],
    ["async () => 1\n)\n;(1"],
  ])("a source that is more than one expression is SCRIPT_FAILED: %j", (source) => {
    let thrown: unknown;
    try {
      guardLoops(source, "g");
    } catch (error) {
      thrown = error;
    }
    expect(errorCode(thrown)).toBe("SCRIPT_FAILED");
    expect((thrown as Error).message).toMatch(/one expression/);
  });

  test("a source that is nothing but loops, as long as a script may be, gets one guard per loop", () => {
    const loops = 7_995;
    const source = `async()=>{${"for(;;);".repeat(loops)}}`;
    expect(source.length).toBeLessThanOrEqual(LIMITS.SOURCE_MAX_LENGTH);
    const guarded = guardLoops(source, "g");
    expect(guarded.split("g();")).toHaveLength(loops + 1);
    expect(guarded).toBe(`async()=>{${"for(;;){ g(); ; }".repeat(loops)}}`);
    // It runs on the OS's thread for every new script: the source is copied a few times, not once
    // per loop (for this source, about 25,000 copies: seconds of CPU).
    expect(charactersSliced(() => guardLoops(source, "g"))).toBeLessThan(10 * source.length);
  });

  test("a parenthesised or commented source is still one expression", () => {
    expect(guardLoops("(async () => 1) // done", "g")).toBe("(async () => 1) // done");
    expect(guardLoops("(1), async () => 2", "g")).toBe("(1), async () => 2");
  });
});
