import { describe, expect, it } from "vitest";
import { z } from "zod";
import { errorCode } from "../../errors/index.ts";
import { defineProcessorContract } from "./contract.ts";

const Core = defineProcessorContract({
  slug: "core",
  version: "1.0.0",
  description: "the context engine's own events",
  stateSchema: z.object({}),
  events: { "events.iterate.com/itx/created": z.object({ path: z.string() }) },
  consumes: [],
  emits: [],
});

const base = {
  slug: "tally",
  version: "1.0.0",
  description: "counts things",
  stateSchema: z.object({ n: z.number().default(0) }),
  events: { "test/tally-added": z.object({ by: z.number() }) },
  consumes: ["test/tally-added"],
  emits: [],
} as const;

/** The message of the INVALID_ARGUMENT a definition throws, or a note that it threw something else. */
function definitionError(define: () => unknown): string {
  try {
    define();
  } catch (error) {
    return errorCode(error) === "INVALID_ARGUMENT" ? (error as Error).message : `not INVALID_ARGUMENT: ${String(error)}`;
  }
  return "did not throw";
}

describe("defineProcessorContract refuses a bad definition", () => {
  it.each([
    ["a slug that is not kebab-case", { ...base, slug: "Tally_1" }, /slug must be lowercase kebab-case/],
    ["a version that is not semver", { ...base, version: "v1" }, /not semver/],
    ["an empty description", { ...base, description: " " }, /description/],
    ["an invalid event type", { ...base, events: { "Bad Type": z.object({}) }, consumes: [] }, /event type "Bad Type"/],
    [
      "a platform type with a third segment",
      { ...base, events: { "events.iterate.com/test/a/b": z.object({}) }, consumes: [] }, // invalid on purpose
      /two segments/,
    ],
    ["a payload schema that is not zod", { ...base, events: { "test/tally-added": { parse: () => 1 } } }, /not a zod schema/],
    ["consumes naming an unknown type", { ...base, consumes: ["test/tally-removed"] }, /consumes names "test\/tally-removed"/],
    ["emits naming an unknown type", { ...base, emits: ["test/tally-reset"] }, /emits names "test\/tally-reset"/],
    ["a type listed twice", { ...base, consumes: ["test/tally-added", "test/tally-added"] }, /twice/],
    [
      "a state schema that cannot parse {}",
      { ...base, stateSchema: z.object({ n: z.number() }) },
      /stateSchema.parse\(\{\}\) must succeed.*n: /,
    ],
    [
      "an event owned by a dep too",
      { ...base, events: { "events.iterate.com/itx/created": z.object({}) }, consumes: [], processorDeps: [Core] },
      /owned by both "core" and "tally"/,
    ],
    ["a dep with the same slug", { ...base, slug: "core", processorDeps: [Core] }, /same slug/],
  ])("%s", (_name, definition, message) => {
    expect(definitionError(() => defineProcessorContract(definition as never))).toMatch(message);
  });

  it("refuses two deps that own the same type", () => {
    const OtherCore = defineProcessorContract({ ...Core, slug: "other-core" });
    expect(
      definitionError(() => defineProcessorContract({ ...base, processorDeps: [Core, OtherCore], consumes: [] })),
    ).toMatch(/owned by both "core" and "other-core"/);
  });

  it("is checked by the compiler too", () => {
    // The runtime check above also exists as a type error for literal definitions.
    expect(() =>
      defineProcessorContract({
        ...base,
        // @ts-expect-error "test/tally-removed" is not in the catalog
        consumes: ["test/tally-removed"],
      }),
    ).toThrow(/consumes names "test\/tally-removed"/);
  });
});

describe("a defined contract", () => {
  const Tally = defineProcessorContract({
    ...base,
    processorDeps: [Core],
    consumes: ["test/tally-added", "events.iterate.com/itx/created"],
  });

  it("gives a fresh initial state each time", () => {
    const first = Tally.initialState();
    first.n = 5;
    expect(Tally.initialState()).toEqual({ n: 0 });
  });

  it("knows its catalog, its owners and what it consumes", () => {
    expect(Object.keys(Tally.catalog).toSorted()).toEqual(["events.iterate.com/itx/created", "test/tally-added"]);
    expect(Tally.owners).toEqual({ "events.iterate.com/itx/created": "core", "test/tally-added": "tally" });
    expect(Object.keys(Tally.events)).toEqual(["test/tally-added"]);
    expect(Tally.isConsumed("events.iterate.com/itx/created")).toBe(true);
    expect(Tally.isConsumed("demo/ping")).toBe(false);
  });

  it.each([
    [{ type: "test/tally-added", payload: { by: 2 } }, { ok: true, payload: { by: 2 } }],
    [{ type: "test/tally-added", payload: { by: "2" } }, { ok: false, issues: [expect.stringMatching(/^by: /)] }],
    [{ type: "events.iterate.com/itx/created", payload: { path: "/a" } }, { ok: true, payload: { path: "/a" } }],
    [{ type: "demo/ping", payload: {} }, { ok: false, issues: [expect.stringMatching(/not in the catalog/)] }],
  ])("parsePayload(%j)", (event, expected) => {
    expect(Tally.parsePayload(event)).toEqual(expected);
  });

  it("is frozen", () => {
    expect(Object.isFrozen(Tally)).toBe(true);
    expect(Object.isFrozen(Tally.consumes)).toBe(true);
  });

  it("accepts a dep reached twice (a diamond) as one owner", () => {
    const Left = defineProcessorContract({ ...base, slug: "left", events: {}, consumes: [], processorDeps: [Core] });
    const Right = defineProcessorContract({ ...base, slug: "right", events: {}, consumes: [], processorDeps: [Core] });
    const Both = defineProcessorContract({ ...base, processorDeps: [Left, Right], consumes: ["events.iterate.com/itx/created"] });
    expect(Both.owners["events.iterate.com/itx/created"]).toBe("core");
  });
});
