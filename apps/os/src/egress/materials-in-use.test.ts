import { describe, expect, test } from "vitest";
import { materialsInPlay, noteMaterialsUsed, recentRecordSize, watchMaterials, watchedScopes } from "./materials-in-use.ts";
import { LIMITS } from "../limits.ts";

// Each test its own project: the records are this isolate's, shared by every test in it.
const scopeOf = (origin = "/") => ({ projectId: `p-${crypto.randomUUID()}`, origin });

// A material of the longest length a secret may have.
const big = (tag: string, i: number) => `${tag}-${i}-`.padEnd(LIMITS.SECRET_MATERIAL_MAX_LENGTH, "x");

function caught(work: () => void): { code?: unknown; details?: unknown } | undefined {
  try {
    work();
    return undefined;
  } catch (error) {
    return error as { code?: unknown; details?: unknown };
  }
}

describe("a watch: the materials a run or call used", () => {
  test("holds what the pipe substituted for its scope while it lasts, and keeps it after it ends", () => {
    const scope = scopeOf();
    const watch = watchMaterials(scope);
    const other = watchMaterials({ ...scope, origin: "/other" });
    noteMaterialsUsed(scope, ["m1", "m2", "m1"]);
    expect(watch.materials()).toEqual(["m1", "m2"]);
    expect(other.materials()).toEqual([]);
    const before = watchedScopes();
    watch.end();
    other.end();
    expect(watchedScopes()).toBe(before - 2);
    expect(watch.materials()).toEqual(["m1", "m2"]);
  });

  test("a scope is a project and an origin: a principal does not separate them (a durable worker keeps the egress of whoever started it)", () => {
    const scope = scopeOf();
    const watch = watchMaterials({ ...scope, principal: "alice" } as typeof scope);
    noteMaterialsUsed({ ...scope, principal: "bob" } as typeof scope, ["bobs"]);
    expect(watch.materials()).toEqual(["bobs"]);
    watch.end();
  });

  test(`past LIMITS.RUN_MATERIALS_MAX (${LIMITS.RUN_MATERIALS_MAX}) distinct materials the result is withheld: LIMIT_EXCEEDED`, () => {
    const scope = scopeOf();
    const watch = watchMaterials(scope);
    noteMaterialsUsed(scope, Array.from({ length: LIMITS.RUN_MATERIALS_MAX }, (_, i) => `m${i}`));
    expect(() => watch.assertWithinLimit()).not.toThrow();
    noteMaterialsUsed(scope, ["one-more"]);
    expect(caught(() => watch.assertWithinLimit())).toMatchObject({ code: "LIMIT_EXCEEDED", details: { limit: "RUN_MATERIALS_MAX" } });
    expect(watch.materials()).toHaveLength(LIMITS.RUN_MATERIALS_MAX);
    watch.end();
  });
});

describe("a scope's recent record: what it used lately, watched or not", () => {
  test("a scope that used no material has none in play (the fast path: nothing to search)", () => {
    expect(materialsInPlay(scopeOf())).toBeUndefined();
    const watch = watchMaterials(scopeOf());
    expect(watch.materials()).toEqual([]);
    watch.end();
  });

  test(`material used with no watch is in play for LIMITS.RECENT_MATERIALS_MS (${LIMITS.RECENT_MATERIALS_MS} ms), and in every later watch of the scope`, () => {
    const scope = scopeOf();
    const now = Date.now();
    noteMaterialsUsed(scope, ["kept-in-a-global"], now);
    expect(materialsInPlay(scope, now)?.materials).toEqual(["kept-in-a-global"]);
    const later = watchMaterials(scope);
    expect(later.materials()).toEqual(["kept-in-a-global"]);
    later.end();
    expect(materialsInPlay({ ...scope, origin: "/elsewhere" }, now)).toBeUndefined();
    // Used again: its window starts again.
    noteMaterialsUsed(scope, ["kept-in-a-global"], now + LIMITS.RECENT_MATERIALS_MS - 1);
    expect(materialsInPlay(scope, now + LIMITS.RECENT_MATERIALS_MS + 1)?.materials).toEqual(["kept-in-a-global"]);
    expect(materialsInPlay(scope, now + 2 * LIMITS.RECENT_MATERIALS_MS)).toBeUndefined();
  });

  test("its version changes when a material is added, not when one is used again", () => {
    const scope = scopeOf();
    noteMaterialsUsed(scope, ["a"]);
    const first = materialsInPlay(scope)?.version;
    noteMaterialsUsed(scope, ["a"]);
    expect(materialsInPlay(scope)?.version).toBe(first);
    noteMaterialsUsed(scope, ["b"]);
    expect(materialsInPlay(scope)?.version).not.toBe(first);
  });

  test(`past LIMITS.RECENT_MATERIALS_MAX (${LIMITS.RECENT_MATERIALS_MAX}) distinct materials in the window the scope's results are withheld until it has passed: LIMIT_EXCEEDED`, () => {
    const scope = scopeOf();
    const now = Date.now();
    noteMaterialsUsed(scope, Array.from({ length: LIMITS.RECENT_MATERIALS_MAX }, (_, i) => `r${i}`), now);
    expect(materialsInPlay(scope, now)).toMatchObject({ overflowed: false });
    // A later call that used nothing itself is withheld too: it could return any of them.
    noteMaterialsUsed(scope, ["one-more"], now);
    const watch = watchMaterials(scope);
    expect(caught(() => watch.assertWithinLimit())).toMatchObject({ code: "LIMIT_EXCEEDED", details: { limit: "RECENT_MATERIALS_MAX" } });
    watch.end();
    expect(materialsInPlay(scope, now)?.materials).toHaveLength(LIMITS.RECENT_MATERIALS_MAX);
    expect(materialsInPlay(scope, now + LIMITS.RECENT_MATERIALS_MS + 1)).toBeUndefined();
  });

  test(`past LIMITS.RECENT_MATERIALS_MAX_CHARS (${LIMITS.RECENT_MATERIALS_MAX_CHARS}) the least recently used scope is forgotten, never the one just used`, () => {
    const perScope = 32;
    const scopes = Array.from({ length: Math.ceil(LIMITS.RECENT_MATERIALS_MAX_CHARS / (perScope * LIMITS.SECRET_MATERIAL_MAX_LENGTH)) + 1 }, () => scopeOf());
    for (const [n, scope] of scopes.entries()) noteMaterialsUsed(scope, Array.from({ length: perScope }, (_, i) => big(`s${n}`, i)));
    expect(recentRecordSize().chars).toBeLessThanOrEqual(LIMITS.RECENT_MATERIALS_MAX_CHARS);
    const alive = scopes.map((scope) => materialsInPlay(scope) !== undefined);
    const oldest = alive.indexOf(true);
    expect(oldest).toBeGreaterThan(0);
    expect(alive.slice(oldest).every(Boolean)).toBe(true);
    expect(materialsInPlay(scopes.at(-1) as (typeof scopes)[number])?.materials).toHaveLength(perScope);
    // Used again, the oldest scope becomes the most recent: the next to go is the one after it.
    const [survivor, next] = [scopes[oldest], scopes[oldest + 1]] as [(typeof scopes)[number], (typeof scopes)[number]];
    noteMaterialsUsed(survivor, [big(`s${oldest}`, 0)]);
    noteMaterialsUsed(scopeOf(), Array.from({ length: perScope }, (_, i) => big("fresh", i)));
    expect(materialsInPlay(survivor)?.materials).toHaveLength(perScope);
    expect(materialsInPlay(next)).toBeUndefined();
  });
});
