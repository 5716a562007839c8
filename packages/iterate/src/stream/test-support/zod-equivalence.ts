import { z } from "zod";
import { compileFastParser, compileSafeParse } from "../processor/compiled-schema.ts";

/** What `checkAgainstZod` found for one schema. */
export interface EquivalenceReport {
  /** False when the whole schema is left to zod (recursive, or not compilable). */
  compiled: boolean;
  /** Kinds of the subtrees the compiled parser hands to zod's own run. */
  islands: string[];
  runs: number;
  /** Inputs zod accepted and rejected: a run that never exercised one side proves little. */
  accepted: number;
  rejected: number;
  /** One line per disagreement, with the input; empty when the compiled parser matched zod throughout. */
  mismatches: string[];
}

/**
 * Runs zod and the compiled parser (`compileSafeParse`, and the raw closure under it) on `runs`
 * generated inputs and reports every disagreement: in success, in output (deep, including key
 * order, prototypes, -0, and which parts are the input's own objects), or in the issues of a
 * failure. Inputs come from the schema itself (values at and around every bound), then are
 * mutated (NaN, Infinity, -0, wrong types, missing and extra keys, own `__proto__` and
 * `constructor` keys, arrays for objects, getters, null-prototype objects) and half the time sent
 * through JSON, as payloads arrive. zod is asked twice: as called, and with `jitless` (the
 * interpreted parser workerd runs); the two must agree too.
 *
 * @example
 * expect(checkAgainstZod(z.object({ i: z.number() }).loose()).mismatches).toEqual([]);
 */
export function checkAgainstZod(schema: z.ZodType, options: { runs?: number; seed?: number } = {}): EquivalenceReport {
  const runs = options.runs ?? 400;
  const random = mulberry32(options.seed ?? 1);
  const fast = compileFastParser(schema);
  const safeParse = compileSafeParse(schema);
  const report: EquivalenceReport = { compiled: fast !== undefined, islands: fast?.islands ?? [], runs, accepted: 0, rejected: 0, mismatches: [] };
  const generator = new InputGenerator(random);
  for (let run = 0; run < runs; run++) {
    let input = generator.sample(schema, 0);
    if (random() < 0.5) input = generator.mutate(input, 0);
    if (random() < 0.5) input = throughJson(input);
    const problem = compareOne(schema, input, fast, safeParse);
    if (problem === "accepted") report.accepted++;
    else if (problem === "rejected") report.rejected++;
    else report.mismatches.push(`${problem} for input ${describeValue(input)}`);
    if (report.mismatches.length >= 10) break;
  }
  return report;
}

type Outcome = { kind: "threw"; error: unknown } | { kind: "result"; result: z.ZodSafeParseResult<unknown> };

function zodOutcome(schema: z.ZodType, input: unknown, jitless: boolean): Outcome {
  try {
    return { kind: "result", result: jitless ? schema.safeParse(input, { jitless: true }) : schema.safeParse(input) };
  } catch (error) {
    return { kind: "threw", error };
  }
}

function compareOne(
  schema: z.ZodType,
  input: unknown,
  fast: ReturnType<typeof compileFastParser>,
  safeParse: (input: unknown) => z.ZodSafeParseResult<unknown>,
): "accepted" | "rejected" | string {
  const refs = objectsOf(input);
  const zod = zodOutcome(schema, input, false);
  const interpreted = zodOutcome(schema, input, true);
  if (zod.kind !== interpreted.kind || (zod.kind === "result" && interpreted.kind === "result" && !sameResult(zod.result, interpreted.result, refs))) {
    return "zod's JIT and interpreted parsers disagree";
  }
  let wrapped: Outcome;
  try {
    wrapped = { kind: "result", result: safeParse(input) };
  } catch (error) {
    wrapped = { kind: "threw", error };
  }
  if (zod.kind === "threw") {
    if (wrapped.kind !== "threw") return "compileSafeParse answered where zod threw";
    if (String(wrapped.error) !== String(zod.error)) return `compileSafeParse threw ${String(wrapped.error)}, zod ${String(zod.error)}`;
  } else {
    if (wrapped.kind === "threw") return `compileSafeParse threw ${String(wrapped.error)} where zod answered`;
    if (!sameResult(zod.result, wrapped.result, refs)) return `compileSafeParse answered ${describeResult(wrapped.result)}, zod ${describeResult(zod.result)}`;
  }
  if (fast) {
    let raw: { kind: "value"; value: unknown } | { kind: "threw" };
    try {
      raw = { kind: "value", value: fast.parse(input) };
    } catch {
      raw = { kind: "threw" };
    }
    // The raw closure must fail exactly when zod does: a union or an absent optional key relies on it.
    if (raw.kind === "value") {
      const zodAccepted = zod.kind === "result" && zod.result.success;
      if (zodAccepted !== (raw.value !== fast.invalid)) {
        return `the compiled closure ${raw.value === fast.invalid ? "rejected" : "accepted"} where zod ${zod.kind === "threw" ? "threw" : zodAccepted ? "accepted" : "rejected"}`;
      }
      if (zodAccepted && zod.kind === "result" && !sameValue(zod.result.data, raw.value, refs, new Set())) {
        return `the compiled closure output ${describeValue(raw.value)}, zod ${describeValue(zod.result.data)}`;
      }
    } else if (zod.kind === "result" && zod.result.success && !fast.islands.length) {
      return "the compiled closure threw where zod accepted";
    }
  }
  return zod.kind === "result" && zod.result.success ? "accepted" : "rejected";
}

function sameResult(a: z.ZodSafeParseResult<unknown>, b: z.ZodSafeParseResult<unknown>, refs: Set<object>): boolean {
  if (a.success !== b.success) return false;
  if (a.success && b.success) return sameValue(a.data, b.data, refs, new Set());
  if (!a.success && !b.success) return JSON.stringify(a.error.issues) === JSON.stringify(b.error.issues);
  return false;
}

/**
 * Deep equality as a caller could observe it: Object.is on primitives (so -0 and NaN count), the
 * same prototype, own keys in the same order, holes, frozenness, and identity where a value is
 * one of the input's own objects (zod hands those through, e.g. under z.unknown()).
 */
function sameValue(a: unknown, b: unknown, refs: Set<object>, seen: Set<object>): boolean {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) {
    if (typeof a === "function" || typeof b === "function") return a === b;
    return Object.is(a, b);
  }
  if (refs.has(a) || refs.has(b)) return a === b;
  if (seen.has(a)) return true;
  seen.add(a);
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b) || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Object.isFrozen(a) !== Object.isFrozen(b)) return false;
  const keysA = Reflect.ownKeys(a);
  const keysB = Reflect.ownKeys(b);
  if (keysA.length !== keysB.length || keysA.some((key, i) => key !== keysB[i])) return false;
  for (const key of keysA) {
    const da = Object.getOwnPropertyDescriptor(a, key);
    const db = Object.getOwnPropertyDescriptor(b, key);
    if (!da || !db || da.enumerable !== db.enumerable || da.writable !== db.writable || "get" in da !== "get" in db) return false;
    if ("value" in da && !sameValue(da.value, db.value, refs, seen)) return false;
  }
  return true;
}

function objectsOf(value: unknown, into: Set<object> = new Set()): Set<object> {
  if (typeof value !== "object" || value === null || into.has(value)) return into;
  into.add(value);
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor && "value" in descriptor) objectsOf(descriptor.value, into);
  }
  return into;
}

function throughJson(value: unknown): unknown {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? value : JSON.parse(text);
  } catch {
    return value;
  }
}

function describeResult(result: z.ZodSafeParseResult<unknown>): string {
  return result.success ? `success ${describeValue(result.data)}` : `failure ${JSON.stringify(result.error.issues)}`;
}

function describeValue(value: unknown): string {
  const seen = new Set<object>();
  const text = JSON.stringify(value, function (this: unknown, _key, inner: unknown) {
    if (typeof inner === "number" && !Number.isFinite(inner)) return `<${inner}>`;
    if (typeof inner === "number" && Object.is(inner, -0)) return "<-0>";
    if (inner === undefined) return "<undefined>";
    if (typeof inner === "object" && inner !== null) {
      if (seen.has(inner)) return "<cycle>";
      seen.add(inner);
      if (Object.getPrototypeOf(inner) === null) return { "<null prototype>": { ...inner } };
      if (Object.hasOwn(inner, "__proto__")) return { "<own __proto__>": (inner as { __proto__: unknown }).__proto__, ...inner };
    }
    return inner;
  });
  return text === undefined ? String(value) : text.length > 400 ? `${text.slice(0, 400)}...` : text;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Def {
  type: string;
  checks?: { _zod: { def: Record<string, unknown> } }[];
  [key: string]: unknown;
}
type Schema = { _zod: { def: Def; values?: Set<unknown> } };

const STRINGS = ["", "a", "ab", "abc", "hello", "user", "developer", "assistant", "succeeded", "failed", "processor", "platform", "ABC_1", "p1:/x", "/secrets/openai", "https://api.example.com/v1", "a@b.co", "2024-01-01T00:00:00.000Z", "0123456789abcdef0123456789abcdef01234567", "x".repeat(65), "🙂", "a🙂", "\ud83d", "__proto__", "constructor", "toString", "1", "-1", "1.5", "01", "NaN"];
const NUMBERS = [0, -0, 1, -1, 2, 0.5, 1.5, 7, 10, 64, 100, 2 ** 31, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), 1e308, 5e-324, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
const EXTRA_KEYS = ["extra", "constructor", "toString", "hasOwnProperty", "valueOf", "1", "", "__defineGetter__"];

class InputGenerator {
  readonly #random: () => number;
  constructor(random: () => number) {
    this.#random = random;
  }

  #chance(p: number): boolean {
    return this.#random() < p;
  }

  #pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#random() * items.length)] as T;
  }

  /** A value shaped by the schema: usually valid, often at or just past a bound. */
  sample(schema: unknown, depth: number): unknown {
    const internals = (schema as Schema | null)?._zod;
    if (!internals || depth > 6 || this.#chance(0.03)) return this.edge(depth);
    const def = internals.def;
    switch (def.type) {
      case "string":
        return this.#leaf(schema as z.ZodType, () => this.#stringsFor(def));
      case "number":
        return this.#leaf(schema as z.ZodType, () => this.#numbersFor(def));
      case "boolean":
        return this.#chance(0.5);
      case "null":
        return null;
      case "undefined":
        return undefined;
      case "literal":
      case "enum":
        return this.#chance(0.85) && internals.values ? this.#pick([...internals.values]) : this.edge(depth);
      case "object":
        return this.#object(def, depth);
      case "array": {
        const lengths = [0, 1, 2, 3, ...boundsOf(def, ["minimum", "maximum", "length"]).flatMap((n) => [n - 1, n, n + 1])].filter((n) => n >= 0 && n < 70);
        return Array.from({ length: this.#pick(lengths) }, () => this.sample(def.element, depth + 1));
      }
      case "record":
        return this.#record(def, depth);
      case "optional":
        return this.#chance(0.45) ? undefined : this.sample(def.innerType, depth + 1);
      case "nullable":
        return this.#chance(0.25) ? null : this.sample(def.innerType, depth + 1);
      case "default":
      case "prefault":
        return this.#chance(0.35) ? undefined : this.sample(def.innerType, depth + 1);
      case "readonly":
      case "catch":
      case "nonoptional":
        return this.sample(def.innerType, depth + 1);
      case "union":
        return Array.isArray(def.options) && def.options.length ? this.sample(this.#pick(def.options), depth + 1) : this.edge(depth);
      case "pipe":
        return this.sample(def.in, depth + 1);
      case "lazy":
        return this.sample((def.getter as () => unknown)(), depth + 1);
      case "tuple":
        return (def.items as unknown[]).map((item) => this.sample(item, depth + 1));
      case "intersection": {
        const left = this.sample(def.left, depth + 1);
        const right = this.sample(def.right, depth + 1);
        return isPlain(left) && isPlain(right) ? { ...left, ...right } : this.#pick([left, right]);
      }
      default:
        return this.edge(depth);
    }
  }

  // Mostly a candidate the leaf itself accepts, so that objects of many keys are often valid whole.
  #leaf(schema: z.ZodType, candidates: () => unknown[]): unknown {
    let known = this.#leaves.get(schema);
    if (!known) {
      const all = candidates();
      const valid = all.filter((candidate) => {
        try {
          return schema.safeParse(candidate).success;
        } catch {
          return false;
        }
      });
      known = { all, valid: valid.length ? valid : all };
      this.#leaves.set(schema, known);
    }
    return this.#pick(this.#chance(0.2) ? known.all : known.valid);
  }

  readonly #leaves = new Map<z.ZodType, { all: unknown[]; valid: unknown[] }>();

  #object(def: Def, depth: number): unknown {
    const shape = def.shape as Record<string, unknown>;
    const out: Record<string, unknown> = this.#chance(0.03) ? Object.create(null) : {};
    for (const key of Object.keys(shape)) {
      const roll = this.#random();
      if (roll < 0.08) continue;
      const value = roll < 0.1 ? undefined : this.sample(shape[key], depth + 1);
      if (roll > 0.98) {
        // A getter: zod reads each declared key once, and so must the compiled parser.
        Object.defineProperty(out, key, { get: () => value, enumerable: true, configurable: true });
      } else {
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      }
    }
    if (this.#chance(0.3)) ownData(out, this.#pick(EXTRA_KEYS), this.edge(depth + 1));
    if (this.#chance(0.1)) ownProto(out, this.#chance(0.5) ? { polluted: true } : this.edge(depth + 1));
    return out;
  }

  #record(def: Def, depth: number): unknown {
    const out: Record<string, unknown> = {};
    const keyDef = (def.keyType as Schema | undefined)?._zod.def;
    const keys = [...STRINGS.slice(0, 8), "__proto__", "constructor", "7", "-0", ...(keyDef ? this.#stringsFor(keyDef).slice(STRINGS.length, STRINGS.length + 12) : [])];
    const values = (def.keyType as Schema | undefined)?._zod.values;
    if (values) keys.push(...[...values].map(String));
    const count = this.#pick([0, 1, 2, 3]);
    for (let i = 0; i < count; i++) {
      const key = this.#pick(keys);
      if (key === "__proto__") ownProto(out, this.sample(def.valueType, depth + 1));
      else out[key] = this.sample(def.valueType, depth + 1);
    }
    return out;
  }

  #stringsFor(def: Def): string[] {
    const lengths = boundsOf(def, ["minimum", "maximum", "length"]).flatMap((n) => [n - 1, n, n + 1]).filter((n) => n >= 0 && n < 70_000);
    const patterns = (def.checks ?? []).map((check) => check._zod.def.pattern).filter((pattern): pattern is RegExp => pattern instanceof RegExp);
    const matching = STRINGS.filter((text) => patterns.every((pattern) => new RegExp(pattern.source, pattern.flags.replace("g", "")).test(text)));
    return [...STRINGS, ...matching, ...matching, ...lengths.flatMap((n) => ["a".repeat(n), "🙂".repeat(n), `${"a".repeat(Math.max(0, n - 1))}🙂`])];
  }

  #numbersFor(def: Def): number[] {
    const bounds = (def.checks ?? []).map((check) => check._zod.def.value).filter((value): value is number => typeof value === "number");
    return [...NUMBERS, ...bounds.flatMap((n) => [n - 1, n - 0.5, n, n + 0.5, n + 1])];
  }

  /** A value of no particular shape: the inputs that trip type checks. */
  edge(depth: number): unknown {
    const roll = Math.floor(this.#random() * 16);
    switch (roll) {
      case 0:
        return this.#pick(NUMBERS);
      case 1:
        return this.#pick(STRINGS);
      case 2:
        return this.#pick([true, false, null, undefined]);
      case 3:
        return [];
      case 4:
        return {};
      case 5:
        return depth > 4 ? null : [this.edge(depth + 1), this.edge(depth + 1)];
      case 6:
        return depth > 4 ? null : { a: this.edge(depth + 1), constructor: this.edge(depth + 1) };
      case 7:
        return JSON.parse('{"__proto__": {"polluted": true}, "i": 1}');
      case 8: {
        const bare = Object.create(null) as Record<string, unknown>;
        bare.i = 1;
        return bare;
      }
      case 9:
        return new Date(0);
      case 10:
        return { length: 1, 0: "a" };
      case 11:
        return new Map([["a", 1]]);
      case 12:
        // An inherited enumerable key: zod's for...in meets it, Object.keys would not.
        return Object.assign(Object.create({ extra: 1 }), { i: 1, a: "a" });
      default:
        return this.#pick([0, -0, "", "a", null, Number.NaN]);
    }
  }

  /** The value with one part replaced, removed or added. */
  mutate(value: unknown, depth: number): unknown {
    if (typeof value !== "object" || value === null || depth > 6 || this.#chance(0.25)) return this.edge(depth);
    if (Array.isArray(value)) {
      const copy = [...value];
      if (copy.length && this.#chance(0.7)) {
        const at = Math.floor(this.#random() * copy.length);
        copy[at] = this.mutate(copy[at], depth + 1);
      } else if (this.#chance(0.5)) {
        copy.push(this.edge(depth + 1));
      } else {
        return Object.assign({}, copy);
      }
      return copy;
    }
    if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return this.edge(depth);
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) copy[key] = (value as Record<string, unknown>)[key];
    const keys = Object.keys(copy);
    const roll = this.#random();
    if (keys.length && roll < 0.5) {
      const key = this.#pick(keys);
      copy[key] = this.mutate(copy[key], depth + 1);
    } else if (keys.length && roll < 0.7) {
      delete copy[this.#pick(keys)];
    } else if (roll < 0.85) {
      copy[this.#pick(EXTRA_KEYS)] = this.edge(depth + 1);
    } else if (roll < 0.93) {
      ownProto(copy, this.edge(depth + 1));
    } else {
      return Object.values(copy);
    }
    return copy;
  }
}

function boundsOf(def: Def, names: string[]): number[] {
  const bounds: number[] = [];
  for (const check of def.checks ?? []) {
    for (const name of names) {
      const bound = check._zod.def[name];
      if (typeof bound === "number" && Number.isFinite(bound)) bounds.push(bound);
    }
  }
  return bounds;
}

// An own `__proto__` data property, as JSON.parse makes one.
function ownProto(target: object, value: unknown): void {
  ownData(target, "__proto__", value);
}

function ownData(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function isPlain(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
