import { z } from "zod";
import { ItxError, errorMessage } from "../../errors/index.ts";
import type { StreamEvent } from "../../types.ts";
import { validateEventType } from "../events/index.ts";
import { compileSafeParse } from "./compiled-schema.ts";

/** Event type -> zod schema of its payload. */
export type EventCatalog = Record<string, z.ZodType>;

/** The result of checking an event's payload against its schema. */
export type PayloadCheck<Payload = unknown> = { ok: true; payload: Payload } | { ok: false; issues: string[] };

/**
 * A processor's contract: what it reads, what it writes, and the shape of its state. Made by
 * `defineProcessorContract`, frozen, and shared by the processor, its tests and its readers.
 */
export interface ProcessorContract<
  State = unknown,
  Catalog extends EventCatalog = EventCatalog,
  Consumes extends string = string,
  Emits extends string = string,
> {
  readonly slug: string;
  readonly version: string;
  readonly description: string;
  readonly stateSchema: z.ZodType<State>;
  /** The events this contract owns: it alone defines their payload schema. */
  readonly events: Readonly<EventCatalog>;
  /** Every event this contract can name: its own plus those of its deps, transitively. */
  readonly catalog: Readonly<Catalog>;
  /** Which contract owns each type of `catalog`, by slug. */
  readonly owners: Readonly<Record<string, string>>;
  readonly processorDeps: readonly ProcessorContract[];
  readonly consumes: readonly Consumes[];
  readonly emits: readonly Emits[];
  /** A fresh initial state: `stateSchema.parse({})`. */
  initialState(): State;
  /** True when the processor reduces events of this type. */
  isConsumed(type: string): boolean;
  /** Checks a payload against the schema of its type; a type outside the catalog fails. */
  parsePayload(event: { type: string; payload: unknown }): PayloadCheck;
}

/** Any contract, whatever its state and events. */
export type AnyProcessorContract = ProcessorContract<unknown, EventCatalog, string, string>;

/** The state type of a contract. */
export type StateOf<C extends AnyProcessorContract> = ReturnType<C["initialState"]>;

type PayloadOf<Catalog, T> = T extends keyof Catalog ? z.output<Catalog[T]> : unknown;
type InputPayloadOf<Catalog, T> = T extends keyof Catalog ? z.input<Catalog[T]> : unknown;

/** A committed event of one of the types a contract consumes, its payload already parsed. */
export type ConsumedEvent<C extends AnyProcessorContract> = {
  [T in C["consumes"][number]]: StreamEvent<T, PayloadOf<C["catalog"], T>>;
}[C["consumes"][number]];

/** An event a processor may append: one of the types its contract emits, with a typed payload. */
export type EmittedInput<C extends AnyProcessorContract> = {
  [T in C["emits"][number]]: {
    type: T;
    payload: InputPayloadOf<C["catalog"], T>;
    idempotencyKey?: string;
    ephemeral?: boolean;
  };
}[C["emits"][number]];

type UnionToIntersection<U> = (U extends unknown ? (arg: U) => void : never) extends (arg: infer I) => void ? I : never;
type CatalogOfDeps<Deps extends readonly AnyProcessorContract[]> = [Deps[number]] extends [never]
  ? unknown
  : UnionToIntersection<Deps[number]["catalog"]>;

/** What `defineProcessorContract` takes. */
export interface ProcessorContractDefinition<
  StateSchema extends z.ZodType,
  Events extends EventCatalog,
  Deps extends readonly AnyProcessorContract[],
  Consumes extends string,
  Emits extends string,
> {
  /** Kebab-case; it names the processor's checkpoint and stamps `source.processor`. */
  slug: string;
  /** Semver. A new version re-reduces the stream from the start, without side effects. */
  version: string;
  description: string;
  /** Parsing `{}` must succeed: its result is the initial state. */
  stateSchema: StateSchema;
  events: Events;
  /** Contracts whose events this one reads without owning them, e.g. the core contract. */
  processorDeps?: Deps;
  consumes: readonly Consumes[];
  emits: readonly Emits[];
}

const SLUG = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * Defines a processor contract and checks it at once: slug and version format, every event type
 * valid and owned by exactly one contract across this one and its deps, `consumes` and `emits`
 * naming types of that catalog, and `stateSchema.parse({})` succeeding. Any problem throws
 * INVALID_ARGUMENT when the module loads, not when the first event arrives.
 *
 * @example
 * const CounterContract = defineProcessorContract({
 *   slug: "counter",
 *   version: "1.0.0",
 *   description: "counts increments",
 *   stateSchema: z.object({ count: z.number().default(0) }),
 *   events: { "test/counter-incremented": z.object({ by: z.number().int() }) },
 *   consumes: ["test/counter-incremented"],
 *   emits: [],
 * });
 * CounterContract.initialState(); // { count: 0 }
 */
export function defineProcessorContract<
  StateSchema extends z.ZodType,
  Events extends EventCatalog,
  const Deps extends readonly AnyProcessorContract[] = [],
  Consumes extends keyof (Events & CatalogOfDeps<Deps>) & string = never,
  Emits extends keyof (Events & CatalogOfDeps<Deps>) & string = never,
>(
  definition: ProcessorContractDefinition<StateSchema, Events, Deps, Consumes, Emits>,
): ProcessorContract<z.output<StateSchema>, Events & CatalogOfDeps<Deps>, Consumes, Emits> {
  const { slug, version, description, stateSchema, events } = definition;
  const fail = (message: string): never => {
    throw new ItxError("INVALID_ARGUMENT", `processor contract "${String(slug)}": ${message}`);
  };
  if (typeof slug !== "string" || !SLUG.test(slug) || slug.length > 64) {
    fail("slug must be lowercase kebab-case, at most 64 characters");
  }
  if (typeof version !== "string" || !SEMVER.test(version)) fail(`version "${String(version)}" is not semver (1.2.3)`);
  if (typeof description !== "string" || description.trim() === "") fail("description must not be empty");
  const deps = definition.processorDeps ?? [];
  const { catalog, owners } = buildCatalog(slug, events, deps, fail);
  const consumes = checkListed("consumes", definition.consumes, catalog, fail);
  const emits = checkListed("emits", definition.emits, catalog, fail);
  const initial = stateSchema.safeParse({});
  if (!initial.success) fail(`stateSchema.parse({}) must succeed to give the initial state: ${formatIssues(initial.error.issues).join("; ")}`);

  const consumed = new Set<string>(consumes);
  // Each payload schema compiled on first use (see compiled-schema.ts): zod's answers, faster.
  const parsers = new Map<string, (payload: unknown) => z.ZodSafeParseResult<unknown>>();
  const contract: AnyProcessorContract = {
    slug,
    version,
    description,
    stateSchema,
    events: Object.freeze({ ...events }),
    catalog: Object.freeze(catalog),
    owners: Object.freeze(owners),
    processorDeps: Object.freeze([...deps]),
    consumes: Object.freeze([...consumes]),
    emits: Object.freeze([...emits]),
    initialState: () => stateSchema.parse({}),
    isConsumed: (type) => consumed.has(type),
    parsePayload: (event) => {
      let parse = parsers.get(event.type);
      if (parse === undefined) {
        const schema = catalog[event.type];
        if (schema === undefined) return { ok: false, issues: [`"${event.type}" is not in the catalog of ${slug}`] };
        parse = compileSafeParse(schema);
        parsers.set(event.type, parse);
      }
      const result = parse(event.payload);
      return result.success ? { ok: true, payload: result.data } : { ok: false, issues: formatIssues(result.error.issues) };
    },
  };
  return Object.freeze(contract) as unknown as ProcessorContract<
    z.output<StateSchema>,
    Events & CatalogOfDeps<Deps>,
    Consumes,
    Emits
  >;
}

function buildCatalog(
  slug: string,
  events: EventCatalog,
  deps: readonly AnyProcessorContract[],
  fail: (message: string) => never,
): { catalog: EventCatalog; owners: Record<string, string> } {
  const catalog: EventCatalog = {};
  const owners: Record<string, string> = {};
  const add = (type: string, schema: z.ZodType, owner: string) => {
    const known = owners[type];
    // The same dep reached twice (a diamond) is one owner, not two.
    if (known !== undefined && (known !== owner || catalog[type] !== schema)) {
      fail(`event "${type}" is owned by both "${known}" and "${owner}"; every event type has exactly one owner`);
    }
    catalog[type] = schema;
    owners[type] = owner;
  };
  for (const dep of deps) {
    if (dep.slug === slug) fail(`a processorDep has the same slug "${slug}"`);
    for (const [type, schema] of Object.entries(dep.catalog)) add(type, schema, dep.owners[type] ?? dep.slug);
  }
  if (typeof events !== "object" || events === null) fail("events must map event types to payload schemas");
  for (const [type, schema] of Object.entries(events)) {
    checkType(type, fail);
    if (typeof (schema as { safeParse?: unknown }).safeParse !== "function") {
      fail(`the payload schema of "${type}" is not a zod schema`);
    }
    add(type, schema, slug);
  }
  return { catalog, owners };
}

function checkType(type: string, fail: (message: string) => never): void {
  try {
    validateEventType(type);
  } catch (error) {
    fail(`event type "${type}": ${errorMessage(error)}`);
  }
}

function checkListed(
  field: "consumes" | "emits",
  listed: readonly string[],
  catalog: EventCatalog,
  fail: (message: string) => never,
): readonly string[] {
  if (!Array.isArray(listed)) fail(`${field} must be a list of event types`);
  const seen = new Set<string>();
  for (const type of listed) {
    if (seen.has(type)) fail(`${field} lists "${type}" twice`);
    seen.add(type);
    if (!Object.hasOwn(catalog, type)) {
      fail(`${field} names "${type}", which neither this contract nor its processorDeps define`);
    }
  }
  return listed;
}

/** Zod issues as one line each: `path: message`. */
export function formatIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string[] {
  return issues.map((issue) => {
    const path = issue.path.map((part) => String(part)).join(".");
    return path === "" ? issue.message : `${path}: ${issue.message}`;
  });
}
