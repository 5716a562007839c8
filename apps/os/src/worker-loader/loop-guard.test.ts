import { describe, expect, test } from "vitest";
import { errorCode } from "iterate/errors";
import { guardLoops } from "./loop-guard.ts";

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

  test("a parenthesised or commented source is still one expression", () => {
    expect(guardLoops("(async () => 1) // done", "g")).toBe("(async () => 1) // done");
    expect(guardLoops("(1), async () => 2", "g")).toBe("(1), async () => 2");
  });
});
