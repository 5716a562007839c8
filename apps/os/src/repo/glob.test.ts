import { describe, expect, test } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import { pathFilter } from "./glob.ts";

describe("glob masks", () => {
  const paths = ["README.md", "src/index.ts", "src/lib/a.ts", "src/lib/a.test.ts", "docs/x.md", "package.json"];
  test.each([
    [{}, paths],
    [{ include: "*.md" }, ["README.md"]],
    [{ include: "**/*.md" }, ["README.md", "docs/x.md"]],
    [{ include: "src/**" }, ["src/index.ts", "src/lib/a.ts", "src/lib/a.test.ts"]],
    [{ include: "src/*" }, ["src/index.ts"]],
    [{ include: ["src/**", "package.json"], exclude: "**/*.test.ts" }, ["src/index.ts", "src/lib/a.ts", "package.json"]],
    [{ include: "{README,package}.*" }, ["README.md", "package.json"]],
    [{ include: "src/lib/?.ts" }, ["src/lib/a.ts"]],
  ])("%j keeps %j", (masks, kept) => {
    expect(paths.filter(pathFilter(masks))).toEqual(kept);
  });

  test("bad masks are INVALID_ARGUMENT", async () => {
    await expectCode(() => pathFilter({ include: 3 }), "INVALID_ARGUMENT");
    await expectCode(() => pathFilter({ include: "{a,b" }), "INVALID_ARGUMENT");
    await expectCode(() => pathFilter({ exclude: Array.from({ length: 101 }, () => "a") }), "INVALID_ARGUMENT");
    await expectCode(() => pathFilter({ include: "x".repeat(257) }), "INVALID_ARGUMENT");
  });
});
