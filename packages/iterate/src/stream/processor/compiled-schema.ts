import { z } from "zod";
import { isRecursiveSchema, regexes, util, type $ZodType } from "zod/v4/core";

/**
 * A faster `schema.safeParse` for the zod 4 schemas contracts use, with zod's answers exactly.
 *
 * workerd forbids `new Function`, so zod runs its interpreted parser there: every event a fold
 * takes paid for a payload object per node, a parse context and the generic walk. This compiles a
 * schema once into a tree of closures, one per node, each taking a value and returning zod's
 * output for it or INVALID. Success returns `{ success: true, data }` as zod does; INVALID (or
 * any throw) runs `schema.safeParse` itself, so every failure carries zod's own error and issues.
 *
 * Exactness, node by node, mirrors zod's interpreted parser (zod/v4/core/schemas.js, which is
 * what workerd runs): the same reads in the same order (`input[key]`, `key in input`, `for...in`
 * for unknown keys, `Reflect.ownKeys` for records), the same outputs (fresh `{}` and arrays, the
 * input itself for primitives and `z.unknown()`), `__proto__` skipped wherever zod skips it so no
 * output's prototype is ever replaced, defaults read through their getter on every parse, and
 * checks run in order on the value the node built, with their own `when`. Built-in checks zod
 * implements as plain comparisons are inlined; every other check runs zod's own check function.
 * What is not compiled runs zod's own `_zod.run` for that subtree (an "island"): exact by
 * construction, with no fast path below it. A recursive schema, or one that fails to compile,
 * keeps zod's `safeParse` whole.
 *
 * Where a child's failure does not fail its parent (a union's branch, an absent optional key, a
 * loose record's key), the closure must fail exactly when zod's would and call no user code zod
 * would not: so a union, an optional key or a record key whose subtree holds user code (a refine,
 * a transform, a default, a custom check or an island) is itself an island.
 *
 * `compiled-schema.test.ts` runs zod and the compiled parser side by side on generated inputs for
 * every node kind here and every contract of the platform.
 *
 * @example
 * const parse = compileSafeParse(z.object({ i: z.number() }).loose());
 * parse({ i: 1, extra: true }); // { success: true, data: { i: 1, extra: true } }, as zod answers
 * parse({ i: "1" }).success; // false, with zod's own error
 */
export function compileSafeParse<S extends z.ZodType>(schema: S): (input: unknown) => z.ZodSafeParseResult<z.output<S>> {
  const cached = COMPILED.get(schema);
  if (cached) return cached as (input: unknown) => z.ZodSafeParseResult<z.output<S>>;
  let parse: (input: unknown) => z.ZodSafeParseResult<z.output<S>>;
  const zodSafeParse = (input: unknown) => schema.safeParse(input);
  let fast: Fast | undefined;
  let compiled = false;
  // Compiled on first use: a shape of getters resolves only when zod would first resolve it.
  parse = (input) => {
    if (!compiled) {
      compiled = true;
      fast = compileFastParser(schema)?.parse;
      if (!fast) {
        parse = zodSafeParse;
        return zodSafeParse(input);
      }
    }
    let data: unknown;
    try {
      data = (fast as Fast)(input);
    } catch {
      // A check that threw or went async: zod answers (and throws) for itself.
      return zodSafeParse(input);
    }
    return data === INVALID ? zodSafeParse(input) : { success: true, data: data as z.output<S> };
  };
  const entry = (input: unknown) => parse(input);
  COMPILED.set(schema, entry);
  return entry;
}

const COMPILED = new WeakMap<object, (input: unknown) => unknown>();

/** What a compiled node returns when zod would report at least one issue. */
const INVALID: unique symbol = Symbol("invalid");
type Fast = (input: unknown) => unknown;

/** A compiled node: its closure, and whether its subtree may run code other than zod's own. */
interface Node {
  readonly run: Fast;
  readonly pure: boolean;
}

// The parts of zod's internals this reads. Its `_zod.def` layouts are zod 4's (see zod/v4/core).
interface Payload {
  value: unknown;
  issues: unknown[];
}
interface Internals {
  def: Def;
  traits: Set<string>;
  optin?: "optional" | "defaulted";
  optout?: "optional";
  values?: Set<unknown>;
  propValues?: Record<string, Set<unknown>>;
  run(payload: Payload, ctx: object): Payload | Promise<Payload>;
  check?: (payload: Payload) => unknown;
}
interface Schema {
  _zod: Internals;
}
interface Def {
  type: string;
  checks?: Schema[];
  coerce?: boolean;
  [key: string]: unknown;
}

class Unsupported extends Error {}

/** State of one compilation: the path of schemas being compiled, and what was left to zod. */
interface Compilation {
  visiting: Set<Schema>;
  islands: string[];
}

/**
 * The raw compiled parser of a schema (its output, or INVALID, or a throw meaning "ask zod"), and
 * the kinds of the subtrees it leaves to zod; undefined when the whole schema is left to zod.
 * For tests and reports; callers use `compileSafeParse`.
 */
export function compileFastParser(schema: unknown): { parse: (input: unknown) => unknown; invalid: symbol; islands: string[] } | undefined {
  // The internals read here are zod 4's (checked against 4.6.7 by the equivalence tests).
  if (!isSchema(schema) || (schema._zod as { version?: { major?: unknown } }).version?.major !== 4) return undefined;
  try {
    if (isRecursiveSchema(schema as unknown as $ZodType)) return undefined;
    const ctx: Compilation = { visiting: new Set(), islands: [] };
    const root = compileNode(schema, ctx);
    return { parse: root.run, invalid: INVALID, islands: ctx.islands };
  } catch {
    return undefined;
  }
}

function describe(schema: Schema): string {
  const { def, traits } = schema._zod;
  return traits.has("$ZodDiscriminatedUnion") ? "discriminated union" : def.coerce ? `coerced ${def.type}` : def.type;
}

function isSchema(value: unknown): value is Schema {
  const internals = (value as { _zod?: Partial<Internals> } | null)?._zod;
  return typeof internals === "object" && internals !== null && internals.traits instanceof Set && typeof internals.run === "function" && typeof internals.def === "object";
}

/** zod's own run of a subtree, as a closure: exact, and the fallback for whatever is not compiled. */
function island(schema: Schema, ctx: Compilation): Node {
  ctx.islands.push(describe(schema));
  const internals = schema._zod;
  return {
    pure: false,
    run: (input) => {
      const result = internals.run({ value: input, issues: [] }, { async: false });
      if (result instanceof Promise) throw new Unsupported("async");
      return result.issues.length === 0 ? result.value : INVALID;
    },
  };
}

function compileNode(schema: Schema, ctx: Compilation): Node {
  if (!isSchema(schema)) throw new Unsupported("not a zod schema");
  if (ctx.visiting.has(schema)) throw new Unsupported("a cycle");
  ctx.visiting.add(schema);
  try {
    const base = compileBase(schema, ctx);
    return withChecks(schema, base);
  } finally {
    ctx.visiting.delete(schema);
  }
}

// The node's own parse, before the checks zod runs after it.
function compileBase(schema: Schema, ctx: Compilation): Node {
  const { def, traits } = schema._zod;
  if (def.coerce) return island(schema, ctx);
  switch (def.type) {
    case "string":
      return traits.has("$ZodString") ? leaf((input) => (typeof input === "string" ? input : INVALID)) : island(schema, ctx);
    case "number":
      // typeof number, not NaN, finite: Number.isFinite is exactly that.
      return traits.has("$ZodNumber") ? leaf((input) => (Number.isFinite(input) ? input : INVALID)) : island(schema, ctx);
    case "boolean":
      return traits.has("$ZodBoolean") ? leaf((input) => (typeof input === "boolean" ? input : INVALID)) : island(schema, ctx);
    case "null":
      return traits.has("$ZodNull") ? leaf((input) => (input === null ? input : INVALID)) : island(schema, ctx);
    case "undefined":
      return traits.has("$ZodUndefined") ? leaf((input) => (input === undefined ? input : INVALID)) : island(schema, ctx);
    case "unknown":
    case "any":
      return traits.has("$ZodUnknown") || traits.has("$ZodAny") ? leaf((input) => input) : island(schema, ctx);
    case "never":
      return traits.has("$ZodNever") ? leaf(() => INVALID) : island(schema, ctx);
    case "literal":
    case "enum":
      return compileValues(schema, ctx);
    case "object":
      return traits.has("$ZodObject") ? compileObject(schema, ctx) : island(schema, ctx);
    case "array":
      return traits.has("$ZodArray") ? compileArray(schema, ctx) : island(schema, ctx);
    case "record":
      return traits.has("$ZodRecord") ? compileRecord(schema, ctx) : island(schema, ctx);
    case "optional":
      return compileOptional(schema, ctx);
    case "nullable":
      return traits.has("$ZodNullable") ? compileNullable(schema, ctx) : island(schema, ctx);
    case "default":
    case "prefault":
      return compileDefault(schema, ctx);
    case "union":
      return compileUnion(schema, ctx);
    default:
      return island(schema, ctx);
  }
}

function leaf(run: Fast): Node {
  return { run, pure: true };
}

function child(def: Def, key: string): Schema {
  const value = def[key];
  if (!isSchema(value)) throw new Unsupported(`def.${key} is not a schema`);
  return value;
}

// Literals and enums match with Set#has (SameValueZero) and return the input itself.
function compileValues(schema: Schema, ctx: Compilation): Node {
  const { traits, values } = schema._zod;
  if (!(traits.has("$ZodLiteral") || traits.has("$ZodEnum")) || !(values instanceof Set)) return island(schema, ctx);
  return leaf((input) => (values.has(input) ? input : INVALID));
}

function compileOptional(schema: Schema, ctx: Compilation): Node {
  const { def, traits } = schema._zod;
  if (!traits.has("$ZodOptional")) return island(schema, ctx);
  const inner = compileNode(child(def, "innerType"), ctx);
  const run = inner.run;
  if (traits.has("$ZodExactOptional")) return inner;
  const innerSchema = child(def, "innerType");
  // Only an inner that substitutes a value for absence (a default) is run on undefined; its failure there is undefined.
  if (innerSchema._zod.optin === "defaulted") {
    return {
      pure: inner.pure,
      run: (input) => {
        if (input !== undefined) return run(input);
        const result = run(undefined);
        return result === INVALID ? undefined : result;
      },
    };
  }
  return { pure: inner.pure, run: (input) => (input === undefined ? undefined : run(input)) };
}

function compileNullable(schema: Schema, ctx: Compilation): Node {
  const inner = compileNode(child(schema._zod.def, "innerType"), ctx);
  const run = inner.run;
  return { pure: inner.pure, run: (input) => (input === null ? null : run(input)) };
}

// `defaultValue` is a getter on the def (a fresh clone, or the factory's result): read on every parse, as zod does.
function compileDefault(schema: Schema, ctx: Compilation): Node {
  const { def, traits } = schema._zod;
  const inner = compileNode(child(def, "innerType"), ctx);
  const run = inner.run;
  if (def.type === "prefault") {
    if (!traits.has("$ZodPrefault")) return island(schema, ctx);
    return { pure: false, run: (input) => run(input === undefined ? def.defaultValue : input) };
  }
  if (!traits.has("$ZodDefault")) return island(schema, ctx);
  return {
    pure: false,
    run: (input) => {
      if (input === undefined) return def.defaultValue;
      const result = run(input);
      if (result === INVALID) return INVALID;
      return result === undefined ? def.defaultValue : result;
    },
  };
}

function compileUnion(schema: Schema, ctx: Compilation): Node {
  const { def, traits } = schema._zod;
  const options = def.options;
  if (!Array.isArray(options)) return island(schema, ctx);
  if (traits.has("$ZodDiscriminatedUnion")) return compileDiscriminatedUnion(schema, ctx);
  if (!traits.has("$ZodUnion") || traits.has("$ZodXor") || def.inclusive === false) return island(schema, ctx);
  if (options.length === 1) return compileNode(options[0] as Schema, ctx);
  // The first branch that succeeds answers, so a failing branch must fail exactly as zod's does.
  const branches = options.map((option: Schema) => compileNode(option, ctx));
  if (branches.some((branch) => !branch.pure)) return island(schema, ctx);
  const runs = branches.map((branch) => branch.run);
  return leaf((input) => {
    for (const run of runs) {
      const result = run(input);
      if (result !== INVALID) return result;
    }
    return INVALID;
  });
}

// zod looks the discriminator up in a map of each option's literal values and runs only that option.
function compileDiscriminatedUnion(schema: Schema, ctx: Compilation): Node {
  const { def } = schema._zod;
  const discriminator = def.discriminator;
  if (typeof discriminator !== "string" || def.unionFallback) return island(schema, ctx);
  const byValue = new Map<unknown, Fast | null>();
  let pure = true;
  for (const option of def.options as Schema[]) {
    const values = option._zod.propValues?.[discriminator];
    if (!(values instanceof Set) || values.size === 0) return island(schema, ctx);
    const node = compileNode(option, ctx);
    pure &&= node.pure;
    const run = node.run;
    for (const value of values) {
      if (byValue.has(value)) {
        // zod throws on a duplicate (its own affair) and marks a shared undefined ambiguous.
        if (value !== undefined) return island(schema, ctx);
        byValue.set(value, null);
      } else {
        byValue.set(value, run);
      }
    }
  }
  return {
    pure,
    run: (input) => {
      if (typeof input !== "object" || input === null || Array.isArray(input)) return INVALID;
      const run = byValue.get((input as Record<string, unknown>)[discriminator]);
      return run ? run(input) : INVALID;
    },
  };
}

function compileArray(schema: Schema, ctx: Compilation): Node {
  const element = compileNode(child(schema._zod.def, "element"), ctx);
  const run = element.run;
  return {
    pure: element.pure,
    run: (input) => {
      if (!Array.isArray(input)) return INVALID;
      const length = input.length;
      // Every index is filled, holes included (read as undefined), as zod's Array(length) is.
      const out: unknown[] = [];
      for (let i = 0; i < length; i++) {
        const value = run(input[i]);
        if (value === INVALID) return INVALID;
        out.push(value);
      }
      return out;
    },
  };
}

/** One declared key of an object, specialised at compile time by how zod treats its absence. */
type Field = (input: Record<string, unknown>, out: Record<string, unknown>) => boolean;
/** zod's handlePropertyResult for any key: what the output gets, or false for a failure. */
type Property = (key: string, input: Record<string, unknown>, out: Record<string, unknown>) => boolean;

function compileObject(schema: Schema, ctx: Compilation): Node {
  const { def } = schema._zod;
  const shape = def.shape as Record<PropertyKey, unknown>;
  if (typeof shape !== "object" || shape === null) throw new Unsupported("no shape");
  if (Object.getOwnPropertySymbols(shape).length > 0) return island(schema, ctx);
  const keys = Object.keys(shape);
  const declared = declaredKeyTest(keys);
  let pure = true;
  const fields: Field[] = [];
  for (const key of keys) {
    const fieldSchema = shape[key];
    if (!isSchema(fieldSchema)) throw new Unsupported(`shape key ${key} is not a schema`);
    // zod never reads, checks or writes a declared __proto__ (and never counts it unknown).
    if (key === "__proto__") continue;
    let node = compileNode(fieldSchema, ctx);
    const { optin, optout } = fieldSchema._zod;
    // An absent optional key drops its failure: the closure must fail exactly when zod's does.
    if (optin !== undefined && optout === "optional" && !node.pure) node = island(fieldSchema, ctx);
    pure &&= node.pure;
    fields.push(declaredField(key, node.run, optin, optout));
  }
  const unknownKeys = compileUnknownKeys(def.catchall, declared, ctx);
  const count = fields.length;
  return {
    pure,
    run: (input) => {
      if (typeof input !== "object" || input === null || Array.isArray(input)) return INVALID;
      const source = input as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (let i = 0; i < count; i++) if (!(fields[i] as Field)(source, out)) return INVALID;
      return unknownKeys === undefined || unknownKeys(source, out) ? out : INVALID;
    },
  };
}

// zod's handleCatchall: undefined (strip) ignores unknown keys; never (strict) refuses them; any
// other schema (loose: unknown) parses each into the output. Unknown keys are what for...in meets.
function compileUnknownKeys(catchall: unknown, declared: (key: string) => boolean, ctx: Compilation): Field | undefined {
  if (catchall === undefined) return undefined;
  if (!isSchema(catchall)) throw new Unsupported("catchall is not a schema");
  if (catchall._zod.def.type === "never") {
    // An own __proto__ is unrecognized too.
    return (input) => {
      for (const key in input) if (!declared(key)) return false;
      return true;
    };
  }
  let node = compileNode(catchall, ctx);
  if (!node.pure) node = island(catchall, ctx);
  const put = property(node.run, catchall._zod.optin, catchall._zod.optout);
  return (input, out) => {
    for (const key in input) {
      // Never copied: assigning it would replace the output's prototype.
      if (declared(key) || key === "__proto__") continue;
      if (!put(key, input, out)) return false;
    }
    return true;
  };
}

// Whether a key is one the shape declares. A few keys compare faster one by one than through a Set.
function declaredKeyTest(keys: readonly string[]): (key: string) => boolean {
  if (keys.length === 0) return () => false;
  if (keys.length === 1) {
    const only = keys[0];
    return (key) => key === only;
  }
  if (keys.length <= 8) return (key) => keys.includes(key);
  const set = new Set(keys);
  return (key) => set.has(key);
}

/**
 * zod's handlePropertyResult: run the key's schema on `input[key]`, then decide by whether the
 * key is present (`key in input`) and the schema's optin/optout what the output gets.
 */
function property(run: Fast, optin: Internals["optin"], optout: Internals["optout"]): Property {
  const optionalOut = optout === "optional";
  return (key, input, out) => {
    const result = run(input[key]);
    const present = key in input;
    // Absence permitted and nothing supplied in its place: the key contributes nothing.
    if (!present && optionalOut && optin === "optional") return true;
    if (result === INVALID) return optin !== undefined && optionalOut && !present;
    if (!present && optin === undefined) return false;
    if (result === undefined) {
      if (present || (optin === "defaulted" && !optionalOut)) out[key] = undefined;
    } else {
      out[key] = result;
    }
    return true;
  };
}

function declaredField(key: string, run: Fast, optin: Internals["optin"], optout: Internals["optout"]): Field {
  if (optin === undefined) {
    // A required key (the common case, inlined): any failure fails, and so does absence.
    return (input, out) => {
      const result = run(input[key]);
      if (result === INVALID || !(key in input)) return false;
      out[key] = result;
      return true;
    };
  }
  const put = property(run, optin, optout);
  return (input, out) => put(key, input, out);
}

const propertyIsEnumerable = Object.prototype.propertyIsEnumerable;

function compileRecord(schema: Schema, ctx: Compilation): Node {
  const { def } = schema._zod;
  const keyType = child(def, "keyType");
  // A key type with a value set (an enum) and no `partial` makes the record exhaustive: zod's own run.
  if (keyType._zod.values && !def.partial) return island(schema, ctx);
  const loose = def.mode === "loose";
  const keyNode = compileNode(keyType, ctx);
  // A loose record keeps a key its schema rejects, so that rejection must be exactly zod's.
  if (loose && !keyNode.pure) return island(schema, ctx);
  const keyRun = keyNode.run;
  const value = compileNode(child(def, "valueType"), ctx);
  const valueRun = value.run;
  const numeric = regexes.number;
  const isPlainObject = util.isPlainObject;
  return {
    pure: keyNode.pure && value.pure,
    run: (input) => {
      if (!isPlainObject(input)) return INVALID;
      const source = input as Record<PropertyKey, unknown>;
      const out: Record<PropertyKey, unknown> = {};
      for (const key of Reflect.ownKeys(source)) {
        if (key === "__proto__" || !propertyIsEnumerable.call(source, key)) continue;
        let outKey = keyRun(key);
        // zod retries a numeric string key as a number (z.record(z.number(), ...)).
        if (outKey === INVALID && typeof key === "string" && numeric.test(key)) {
          const retried = keyRun(Number(key));
          if (retried !== INVALID) outKey = retried;
        }
        if (outKey === INVALID) {
          if (!loose) return INVALID;
          out[key] = source[key];
          continue;
        }
        if (outKey === "__proto__") continue;
        const result = valueRun(source[key]);
        if (result === INVALID) return INVALID;
        out[outKey as PropertyKey] = result;
      }
      return out;
    },
  };
}

/** The checks zod runs after a node's parse, in order, on the value the node built. */
function withChecks(schema: Schema, base: Node): Node {
  const internals = schema._zod;
  const defChecks = internals.def.checks ?? [];
  // A schema that is itself a check (a string format, z.int()) runs itself first.
  const checks = internals.traits.has("$ZodCheck") ? [schema, ...defChecks] : defChecks;
  if (checks.length === 0) return base;
  let pure = base.pure;
  const steps: Fast[] = [];
  for (const check of checks) {
    const step = compileCheck(check);
    pure &&= step.pure;
    steps.push(step.run);
  }
  const run = base.run;
  const count = steps.length;
  return {
    pure,
    run: (input) => {
      let value = run(input);
      if (value === INVALID) return INVALID;
      for (let i = 0; i < count; i++) {
        value = (steps[i] as Fast)(value);
        if (value === INVALID) return INVALID;
      }
      return value;
    },
  };
}

// The `when` zod gives length and size checks when none is set: shared, so a custom one is told apart.
const DEFAULT_LENGTH_WHEN = whenOf(z.string().min(1));
const DEFAULT_SIZE_WHEN = whenOf(z.set(z.string()).min(1));
function whenOf(schema: z.ZodType): unknown {
  return (schema._zod.def.checks?.[0]?._zod.def as { when?: unknown } | undefined)?.when;
}
// Check kinds that are zod's own comparisons and formats, with no user code.
const PURE_CHECKS = new Set([
  "less_than",
  "greater_than",
  "multiple_of",
  "number_format",
  "bigint_format",
  "min_length",
  "max_length",
  "length_equals",
  "min_size",
  "max_size",
  "size_equals",
  "string_format",
  "mime_type",
]);

function compileCheck(check: Schema): Node {
  const def = check._zod.def as Def & { check?: string; when?: unknown; value?: unknown; inclusive?: boolean };
  const kind = def.check;
  if (typeof kind !== "string") throw new Unsupported("a check without a kind");
  const when = def.when;
  if (when === undefined) {
    if (kind === "greater_than" && typeof def.value === "number") {
      const bound = def.value;
      return leaf(def.inclusive ? (value) => ((value as number) >= bound ? value : INVALID) : (value) => ((value as number) > bound ? value : INVALID));
    }
    if (kind === "less_than" && typeof def.value === "number") {
      const bound = def.value;
      return leaf(def.inclusive ? (value) => ((value as number) <= bound ? value : INVALID) : (value) => ((value as number) < bound ? value : INVALID));
    }
    if (kind === "number_format") {
      const format = def.format as keyof typeof util.NUMBER_FORMAT_RANGES;
      const range = util.NUMBER_FORMAT_RANGES[format];
      if (range) {
        const [minimum, maximum] = range;
        const isInt = format.includes("int");
        return leaf((value) => {
          if (isInt && !Number.isSafeInteger(value)) return INVALID;
          return (value as number) < minimum || (value as number) > maximum ? INVALID : value;
        });
      }
    }
    if (kind === "string_format" && def.format === "regex" && def.pattern instanceof RegExp && check._zod.traits.has("$ZodCheckRegex")) {
      const pattern = def.pattern;
      return leaf((value) => {
        pattern.lastIndex = 0;
        return pattern.test(value as string) ? value : INVALID;
      });
    }
  } else if (when === DEFAULT_LENGTH_WHEN && DEFAULT_LENGTH_WHEN !== undefined) {
    const lengthCheck = compileLengthCheck(kind, def);
    if (lengthCheck) return leaf(lengthCheck);
  }
  return genericCheck(check, kind);
}

// The default `when` of length checks: a value that is not nullish and has a length.
function hasLength(value: unknown): value is { length: number } {
  return value !== null && value !== undefined && (value as { length?: unknown }).length !== undefined;
}

// zod measures strings in code points and anything else by `.length`, counting only when in doubt.
function compileLengthCheck(kind: string, def: Record<string, unknown>): Fast | undefined {
  const codePoints = util.codePointLength;
  if (kind === "max_length" && typeof def.maximum === "number") {
    const maximum = def.maximum;
    return (value) => {
      if (!hasLength(value)) return value;
      const units = value.length;
      const length = typeof value === "string" && units > maximum ? codePoints(value) : units;
      return length <= maximum ? value : INVALID;
    };
  }
  if (kind === "min_length" && typeof def.minimum === "number") {
    const minimum = def.minimum;
    return (value) => {
      if (!hasLength(value)) return value;
      const units = value.length;
      const length = typeof value === "string" && units >= minimum && units < minimum * 2 ? codePoints(value) : units;
      return length >= minimum ? value : INVALID;
    };
  }
  if (kind === "length_equals" && typeof def.length === "number") {
    const exact = def.length;
    return (value) => {
      if (!hasLength(value)) return value;
      const units = value.length;
      const length = typeof value === "string" && units >= exact && units <= exact * 2 ? codePoints(value) : units;
      return length === exact ? value : INVALID;
    };
  }
  return undefined;
}

// Any other check runs zod's own check function on a payload of its own, after its own `when`.
function genericCheck(check: Schema, kind: string): Node {
  const internals = check._zod;
  const body = internals.check;
  if (typeof body !== "function") throw new Unsupported("a check without a function");
  const when = (internals.def as { when?: unknown }).when;
  if (when !== undefined && typeof when !== "function") throw new Unsupported("a check with a strange when");
  const builtInWhen = when === undefined || (when !== undefined && (when === DEFAULT_LENGTH_WHEN || when === DEFAULT_SIZE_WHEN));
  const pure = PURE_CHECKS.has(kind) && builtInWhen && typeof (internals.def as { fn?: unknown }).fn !== "function";
  return {
    pure,
    run: (value) => {
      const payload: Payload = { value, issues: [] };
      if (typeof when === "function" && !when(payload)) return value;
      const returned = body.call(internals, payload);
      if (returned instanceof Promise) throw new Unsupported("async check");
      return payload.issues.length === 0 ? payload.value : INVALID;
    },
  };
}
