import { describe, expect, test } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import { coordinateName, parseStreamPath } from "./coordinate.ts";
import { LIMITS } from "../limits.ts";

describe("stream paths", () => {
  test.each(["/", "/agents/a", "/repos/config", "/itx/a1b2", "/a/b.c/d_e/~f"])("%s is a path", (path) => {
    expect(parseStreamPath(path)).toBe(path);
  });

  test.each([
    ["no leading slash", "agents"],
    ["a trailing slash", "/agents/"],
    ["an empty segment", "/a//b"],
    ["a dot segment", "/a/./b"],
    ["a dot-dot segment", "/a/../b"],
    ["a space", "/a b"],
    ["a colon", "/a:b"],
    ["not a string", 42],
    ["STREAM_PATH_MAX_LENGTH", `/${"a".repeat(LIMITS.STREAM_PATH_MAX_LENGTH)}`],
  ])("%s is INVALID_ARGUMENT", async (_name, path) => {
    await expectCode(() => parseStreamPath(path), "INVALID_ARGUMENT");
  });

  test("a coordinate is projectId:path", () => {
    expect(coordinateName({ projectId: "prj_1", path: "/agents/a" })).toBe("prj_1:/agents/a");
  });
});
