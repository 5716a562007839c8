import { describe, expect, test } from "vitest";
import { errorCode } from "iterate/errors";
import { boundedTree } from "./json-bounds.ts";

describe("JSON bounds", () => {
  test("boundedTree copies shared references out, cuts cycles, keeps __proto__ a key, and stops at the node bound", () => {
    const shared = { x: 1 };
    const cyclic: Record<string, unknown> = { name: "c" };
    cyclic.self = cyclic;
    const source = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    source.a = shared;
    source.b = shared;
    source.c = cyclic;
    const copy = boundedTree(source, 100, "REMOTE_SCHEMA_NODES_MAX") as Record<string, unknown>;
    expect(copy.a).toEqual({ x: 1 });
    expect(copy.a).not.toBe(copy.b);
    expect(copy.c).toEqual({ name: "c", self: { $ref: "#circular" } });
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    let error: unknown;
    try {
      boundedTree(Array.from({ length: 200 }, () => shared), 100, "REMOTE_SCHEMA_NODES_MAX");
    } catch (caught) {
      error = caught;
    }
    expect(errorCode(error)).toBe("LIMIT_EXCEEDED");
    expect((error as { details?: { limit?: string } }).details?.limit).toBe("REMOTE_SCHEMA_NODES_MAX");
  });
});
