import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkAgainstZod } from "../test-support/zod-equivalence.ts";
import { CounterContract } from "../examples/counter/contract.ts";
import { GreeterContract } from "../examples/greeter/contract.ts";
import { compileFastParser, compileSafeParse } from "./compiled-schema.ts";
import type { AnyProcessorContract } from "./contract.ts";
import { runAttemptPayloadSchema, runSettledPayloadSchema, runStateSchema } from "./multi-step-run.ts";

const HEX = /^[0-9a-f]{40}$/;
const withProtoKey = z.object({ ["__proto__"]: z.string(), a: z.number() });

/** Every node kind the compiler handles, and the ones it leaves to zod, alone and combined. */
const SHAPES: [string, z.ZodType][] = [
  ["string", z.string()],
  ["string with length bounds", z.string().min(2).max(5)],
  ["string of exact length", z.string().length(3)],
  ["string with a regex", z.string().regex(HEX)],
  ["string with a global regex", z.string().regex(/a/g)],
  ["string trimmed and lowercased (overwrite checks)", z.string().trim().toLowerCase()],
  ["email", z.email()],
  ["url with a protocol", z.url({ protocol: /^https?$/ }).max(2_048)],
  ["string starting with", z.string().startsWith("a").includes("b")],
  ["number", z.number()],
  ["integer", z.number().int()],
  ["z.int()", z.int()],
  ["positive integer", z.number().int().positive()],
  ["nonnegative number", z.number().nonnegative()],
  ["bounded number", z.number().min(-1).max(10)],
  ["exclusive bounds", z.number().gt(0).lt(1)],
  ["multiple of", z.number().multipleOf(0.5)],
  ["int32", z.int32()],
  ["boolean", z.boolean()],
  ["null", z.null()],
  ["undefined", z.undefined()],
  ["unknown", z.unknown()],
  ["any", z.any()],
  ["never", z.never()],
  ["literal", z.literal("a")],
  ["literal zero (and -0)", z.literal(0)],
  ["literal NaN", z.literal(Number.NaN)],
  ["literals", z.literal([1, "1", null, true])],
  ["enum", z.enum(["user", "developer", "assistant"])],
  ["object (strip)", z.object({ a: z.string(), b: z.number() })],
  ["empty object", z.object({})],
  ["strict object", z.strictObject({ a: z.string(), b: z.number().optional() })],
  ["empty strict object", z.strictObject({})],
  ["loose object", z.object({ i: z.number() }).loose()],
  ["passthrough object", z.object({ i: z.number() }).passthrough()],
  ["object with a catchall", z.object({ a: z.string() }).catchall(z.number())],
  ["object with an optional catchall", z.object({ a: z.string() }).catchall(z.number().optional())],
  ["object with a refined catchall", z.object({}).catchall(z.number().refine((n) => n > 1))],
  ["object keyed like Object.prototype", z.object({ constructor: z.string(), toString: z.number().optional(), valueOf: z.unknown() })],
  ["object with a declared __proto__", withProtoKey],
  ["strict object with a declared __proto__", withProtoKey.strict()],
  ["object with a required unknown", z.object({ state: z.unknown(), other: z.any() })],
  ["object with optional, nullable and default keys", z.object({
    o: z.string().optional(),
    n: z.string().nullable(),
    d: z.number().default(7),
    nd: z.string().nullable().default(null),
    od: z.number().default(3).optional(),
    do: z.number().optional().default(4),
    dn: z.array(z.string()).default([]),
    df: z.object({ x: z.number().default(1) }).default(() => ({ x: 2 })),
    pf: z.string().prefault("p"),
    eo: z.string().exactOptional(),
    nu: z.undefined(),
    ou: z.union([z.string(), z.undefined()]),
  })],
  ["nested objects", z.object({ a: z.object({ b: z.strictObject({ c: z.array(z.number()) }) }) })],
  ["array", z.array(z.string())],
  ["bounded array", z.array(z.number().int()).min(1).max(3)],
  ["array of objects", z.array(z.object({ a: z.string() }).loose())],
  ["array of optionals", z.array(z.string().optional())],
  ["record", z.record(z.string(), z.number())],
  ["record with bounded keys", z.record(z.string().min(1).max(3), z.string())],
  ["record with regex keys", z.record(z.string().regex(/^[a-z]+$/), z.unknown())],
  ["record with numeric keys", z.record(z.number(), z.string())],
  ["record with enum keys", z.record(z.enum(["a", "b"]), z.number())],
  ["partial record", z.partialRecord(z.enum(["a", "b"]), z.number())],
  ["loose record", z.looseRecord(z.string().regex(/^[a-z]+$/), z.number())],
  ["record of objects", z.record(z.string(), z.object({ a: z.number().default(0) }))],
  ["union of literals", z.union([z.literal("a"), z.literal("b"), z.literal(1)])],
  ["union of objects", z.union([z.object({ a: z.string() }), z.strictObject({ b: z.number() }), z.object({ a: z.number() }).loose()])],
  ["union of one", z.union([z.string()])],
  ["union with a default (left to zod)", z.union([z.object({ a: z.number().default(1) }), z.string()])],
  ["union with a refine (left to zod)", z.union([z.string().refine((s) => s.length > 2), z.number()])],
  ["xor", z.xor([z.string(), z.string().min(2)])],
  ["discriminated union", z.discriminatedUnion("kind", [z.strictObject({ kind: z.literal("a"), a: z.string() }), z.object({ kind: z.literal(["b", "c"]), b: z.number().optional() })])],
  ["nullable discriminated union", z.discriminatedUnion("kind", [z.object({ kind: z.literal("a") }), z.object({ kind: z.literal("b").optional() })]).nullable()],
  ["refined object", z.strictObject({ every: z.number().optional(), cron: z.string().optional() }).refine((v) => (v.every === undefined) !== (v.cron === undefined), "exactly one")],
  ["superRefine", z.string().superRefine((s, ctx) => {
    if (s.length === 1) ctx.addIssue({ code: "custom", message: "one" });
  })],
  ["refine with when", z.object({ a: z.string(), b: z.string() }).refine((v) => v.a === v.b, { when: (payload) => typeof (payload.value as { a?: unknown }).a === "string" })],
  ["refine that throws", z.string().refine((s) => {
    if (s === "a") throw new Error("refine threw");
    return true;
  })],
  ["union whose failing branch would throw", z.union([
    z.object({ a: z.number(), b: z.string().refine((s) => {
      if (s.length < 3) throw new Error("refine threw");
      return true;
    }) }),
    z.object({ b: z.string() }),
  ])],
  ["keys whose absence yields undefined or fails quietly", z.object({
    u: z.undefined().default(undefined as never),
    s: z.number().default(1).optional().refine(() => false),
  })],
  ["optional refined key", z.object({ a: z.string().refine((s) => s !== "abc").optional() })],
  ["transform", z.string().transform((s) => s.length)],
  ["pipe", z.string().pipe(z.string().min(2))],
  ["preprocess", z.preprocess((v) => (typeof v === "string" ? v.trim() : v), z.string())],
  ["coerced number", z.coerce.number()],
  ["catch", z.number().catch(0)],
  ["readonly", z.object({ a: z.string() }).readonly()],
  ["tuple", z.tuple([z.string(), z.number().optional()])],
  ["intersection", z.intersection(z.object({ a: z.string() }).loose(), z.object({ b: z.number() }).loose())],
  ["nonoptional", z.string().optional().nonoptional()],
  ["object containing islands", z.object({ t: z.tuple([z.string()]), n: z.number(), x: z.string().transform((s) => s.toUpperCase()) })],
  ["date", z.date()],
  ["getter shape", z.object({
    get inner() {
      return z.object({ a: z.number() });
    },
  })],
];

const RECURSIVE: z.ZodType = z.lazy(() => z.object({ children: z.array(RECURSIVE) }));

describe("compileSafeParse answers as zod's safeParse does", () => {
  it.each(SHAPES)("%s", (_name, schema) => {
    const report = checkAgainstZod(schema, { runs: 300 });
    expect(report.mismatches).toEqual([]);
  });

  it.each(contractSchemas([CounterContract, GreeterContract]))("%s", (_name, schema) => {
    const report = checkAgainstZod(schema, { runs: 600 });
    expect(report.mismatches).toEqual([]);
    // A contract's schemas compile whole: nothing of them is left to zod.
    expect(report.islands).toEqual([]);
    expect(report.accepted).toBeGreaterThan(60);
    expect(report.rejected).toBeGreaterThan(60);
  });

  it.each([
    ["a run's state", runStateSchema],
    ["a run's attempt", runAttemptPayloadSchema],
    ["a run's settlement", runSettledPayloadSchema],
  ])("%s", (_name, schema) => {
    expect(checkAgainstZod(schema, { runs: 800 }).mismatches).toEqual([]);
  });

  it("leaves a recursive schema to zod whole", () => {
    expect(compileFastParser(RECURSIVE)).toBeUndefined();
    expect(checkAgainstZod(RECURSIVE, { runs: 200 }).mismatches).toEqual([]);
  });

  it("compiles the replay benchmark's schemas with nothing left to zod", () => {
    expect(compileFastParser(z.object({ i: z.number() }).loose())?.islands).toEqual([]);
    expect(compileFastParser(z.object({ count: z.number().default(0), sum: z.number().default(0) }))?.islands).toEqual([]);
  });
});

describe("compileSafeParse and untrusted payloads", () => {
  it("never lets a JSON __proto__ key reach an output's prototype", () => {
    const parse = compileSafeParse(z.object({ i: z.number() }).loose());
    const result = parse(JSON.parse('{"i": 1, "__proto__": {"polluted": true}, "x": {"__proto__": {"polluted": true}}}'));
    expect(result.success).toBe(true);
    const data = result.data as Record<string, unknown>;
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.hasOwn(data, "__proto__")).toBe(false);
    expect(data.polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses a JSON __proto__ key where the object is strict, as zod does", () => {
    const parse = compileSafeParse(z.strictObject({ i: z.number() }));
    const result = parse(JSON.parse('{"i": 1, "__proto__": {}}'));
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual(z.strictObject({ i: z.number() }).safeParse(JSON.parse('{"i": 1, "__proto__": {}}')).error?.issues);
  });

  it("gives each parse a default of its own", () => {
    const parse = compileSafeParse(z.object({ list: z.array(z.string()).default([]), bag: z.object({}).loose().default({}) }));
    const first = parse({}).data;
    const second = parse({}).data;
    expect(first).toEqual({ list: [], bag: {} });
    expect(first?.list).not.toBe(second?.list);
    expect(first?.bag).not.toBe(second?.bag);
  });

  it("reports zod's own issues on a failure", () => {
    const schema = z.strictObject({ by: z.number().int().positive() });
    const result = compileSafeParse(schema)({ by: 1.5, extra: true });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual(schema.safeParse({ by: 1.5, extra: true }).error?.issues);
  });

  it("is one parser per schema", () => {
    const schema = z.object({ a: z.string() });
    expect(compileSafeParse(schema)).toBe(compileSafeParse(schema));
  });
});

function contractSchemas(contracts: AnyProcessorContract[]): [string, z.ZodType][] {
  return contracts.flatMap((contract) => [
    [`${contract.slug} state`, contract.stateSchema] as [string, z.ZodType],
    ...Object.entries(contract.events).map(([type, schema]) => [`${contract.slug} ${type}`, schema] as [string, z.ZodType]),
  ]);
}
