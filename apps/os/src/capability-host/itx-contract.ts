import { z } from "zod";
import { errorCode, errorMessage } from "iterate/errors";
import { StreamProcessor, defineProcessorContract, type ProcessEventArgs, type ReduceArgs } from "iterate/stream/processor";
import { pathKey } from "./capability-path.ts";
import { reactionTo } from "../stream/reaction.ts";
import { LIMITS } from "../limits.ts";

export const ITX_CREATED = "events.iterate.com/itx/created";
export const CAPABILITY_PROVIDED = "events.iterate.com/itx/capability-provided";
export const CAPABILITY_REVOKED = "events.iterate.com/itx/capability-revoked";
export const CAPABILITY_DISCONNECTED = "events.iterate.com/itx/capability-disconnected";
export const RUN_REQUESTED = "events.iterate.com/itx/run-requested";
export const RUN_SETTLED = "events.iterate.com/itx/run-settled";


const segments = z.array(z.string()).max(32);

/** One step of an expression recipe: call `path` on the previous value (`args` omitted: the call's own args). */
export const expressionStepSchema = z.strictObject({ path: segments.min(1), args: z.array(z.unknown()).max(16).optional() });
export type ExpressionStep = z.infer<typeof expressionStepSchema>;

/** Source code of a durable source capability: plain JavaScript modules, loaded into an isolate per call. */
export const sourceSchema = z.strictObject({
  mainModule: z.string().min(1).max(128),
  modules: z.record(z.string().min(1).max(128), z.string()),
  /** The export to call: a WorkerEntrypoint class (default: the default export) or a DurableObject class. */
  entrypoint: z.string().min(1).max(128).optional(),
  /** "durable-object": the export is a DurableObject class, hosted as a facet of this context with its own SQLite. */
  exportType: z.enum(["worker-entrypoint", "durable-object"]).optional(),
});
export type CapabilitySource = z.infer<typeof sourceSchema>;

/** How a live capability is dispatched: call the function, replay onto members, or call({ path, args }). */
export const liveShapeSchema = z.enum(["function", "members", "call"]);
export type LiveShape = z.infer<typeof liveShapeSchema>;

const providedSchema = z.strictObject({
  /** Empty only for the jail row (kind "null"): see jail.ts. */
  path: segments,
  /** "null": the jail row; "built-in": a jail's grant of the built-in its path names. */
  kind: z.enum(["live", "itx-expression", "source", "null", "built-in"]),
  instructions: z.string().max(LIMITS.INSTRUCTIONS_MAX_LENGTH).optional(),
  types: z.string().max(LIMITS.TYPES_MAX_LENGTH).optional(),
  live: z.strictObject({ shape: liveShapeSchema, connectionId: z.string().max(128) }).optional(),
  expression: z.array(expressionStepSchema).min(1).max(LIMITS.EXPRESSION_STEPS_MAX).optional(),
  source: sourceSchema.optional(),
  /** Reachable over HTTP at {name}--{project}.{base} (its `fetch`), publicly. */
  http: z.strictObject({ expose: z.boolean() }).optional(),
});

const mountSchema = providedSchema.extend({
  providedAtOffset: z.number().int(),
  disconnected: z.boolean(),
  provider: z.strictObject({ principal: z.string().optional(), origin: z.string().optional() }),
});
export type Mount = z.infer<typeof mountSchema>;

const runRequestedSchema = z.strictObject({
  script: z.string().min(1).max(64_000),
  /** Set: the context's own processor runs it (at most once). Unset: the caller runs it inline. */
  enqueued: z.boolean().optional(),
});

const runSettledSchema = z.strictObject({
  requestOffset: z.number().int().positive(),
  status: z.enum(["succeeded", "failed"]),
  result: z.unknown().optional(),
  error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
});

const openRunSchema = z.strictObject({
  requestOffset: z.number().int(),
  script: z.string(),
  principal: z.string(),
  /** Who wrote the request: the run acts as that context, never as this one by default. */
  origin: z.string().optional(),
  /** The run reacts to its request: its writes carry that chain one round on. */
  reaction: z.strictObject({ began: z.string(), round: z.number().int() }),
});
export type OpenRun = z.infer<typeof openRunSchema>;

const birthSchema = z.strictObject({
  name: z.string().max(256),
  parent: z.string().nullable(),
  ancestors: z.array(z.string()).max(64),
});
export type BirthCertificate = z.infer<typeof birthSchema>;

/**
 * The context engine's contract: a context's birth certificate and its path-keyed capability
 * table, folded from the context's own stream. The checkpoint is a cache of this fold.
 */
export const ItxContract = defineProcessorContract({
  slug: "core",
  version: "1.0.0",
  description: "Folds a context's birth certificate and its capability table from itx/* events.",
  stateSchema: z.object({
    born: birthSchema.nullable().default(null),
    mounts: z.record(z.string(), mountSchema).default({}),
    /** Enqueued runs not yet settled, by request offset. */
    runs: z.record(z.string(), openRunSchema).default({}),
  }),
  events: {
    [ITX_CREATED]: birthSchema,
    [CAPABILITY_PROVIDED]: providedSchema,
    [CAPABILITY_REVOKED]: z.strictObject({ path: segments, providedAtOffset: z.number().int().optional() }),
    [CAPABILITY_DISCONNECTED]: z.strictObject({ path: segments.min(1), providedAtOffset: z.number().int() }),
    [RUN_REQUESTED]: runRequestedSchema,
    [RUN_SETTLED]: runSettledSchema,
  },
  consumes: [ITX_CREATED, CAPABILITY_PROVIDED, CAPABILITY_REVOKED, CAPABILITY_DISCONNECTED, RUN_REQUESTED, RUN_SETTLED],
  emits: [CAPABILITY_DISCONNECTED, RUN_SETTLED],
});

export type ItxState = ReturnType<typeof ItxContract.initialState>;

/** Runs an enqueued script; the capability host supplies it (the fold itself stays pure). */
export type EnqueuedRunner = (run: OpenRun) => Promise<{ status: "succeeded"; result?: unknown } | { status: "failed"; error: { code: string; message: string } }>;

type RunOutcome = Awaited<ReturnType<EnqueuedRunner>>;

/** The runner's outcome; a runner that throws (the platform failed around the script) settles the run failed with its code. */
async function outcomeOf(runner: EnqueuedRunner, run: OpenRun): Promise<RunOutcome> {
  try {
    return await runner(run);
  } catch (error) {
    return { status: "failed", error: { code: errorCode(error) ?? "INTERNAL", message: errorMessage(error).slice(0, LIMITS.FAILURE_MESSAGE_MAX_LENGTH) } };
  }
}

/**
 * What an enqueued run settles as when an earlier start of it never finished: its host died (or
 * was restarted) mid-run, which is what a script that hangs or crashes the runtime looks like. It
 * is never started again, so a poison pill cannot take the host down on every restart.
 */
export const INTERRUPTED_RUN_ERROR = {
  code: "RESOURCE_EXHAUSTED",
  message: "an earlier start of this enqueued run never finished (its host stopped mid-run); it is settled failed instead of run again",
} as const;

/**
 * The fold of a context's own events, and the driver of its enqueued runs: at the head, each open
 * run gets one background driver, whose claim revives it if the host dies. A run is started at
 * most once: a revived claim (attempt > 1) settles the run failed (INTERRUPTED_RUN_ERROR) instead
 * of running it again. Its settled fact is keyed by the request, so it lands once.
 */
export class ItxCore extends StreamProcessor<typeof ItxContract> {
  readonly contract = ItxContract;
  readonly #runner: EnqueuedRunner | undefined;
  /**
   * Outcomes of runs this incarnation started whose settled fact has not landed yet. A driver that
   * fails after its script ran (the settle's append refused, say) leaves the run open, and the
   * next pass starts a new driver: it settles with the outcome kept here, never running the
   * script a second time.
   */
  readonly #outcomes = new Map<number, RunOutcome>();

  constructor(runner?: EnqueuedRunner) {
    super();
    this.#runner = runner;
  }

  override async processEvent({ state, delivery, runInBackground }: ProcessEventArgs<typeof ItxContract>): Promise<void> {
    const runner = this.#runner;
    if (!runner || !delivery.caughtUp) return;
    for (const offset of this.#outcomes.keys()) if (!state.runs[String(offset)]) this.#outcomes.delete(offset);
    for (const run of Object.values(state.runs)) {
      await runInBackground(`run:${run.requestOffset}`, async ({ append, attempt }) => {
        let outcome = this.#outcomes.get(run.requestOffset);
        if (outcome === undefined) {
          outcome = attempt > 1 ? { status: "failed" as const, error: { ...INTERRUPTED_RUN_ERROR } } : await outcomeOf(runner, run);
          this.#outcomes.set(run.requestOffset, outcome);
        }
        try {
          await append({
            type: RUN_SETTLED,
            payload: { requestOffset: run.requestOffset, ...outcome },
            idempotencyKey: `itx/run-settled:${run.requestOffset}`,
          });
        } catch (error) {
          // Settled already (by an earlier driver whose answer was lost): the fact stands.
          if (errorCode(error) !== "IDEMPOTENCY_CONFLICT") throw error;
        }
        this.#outcomes.delete(run.requestOffset);
      });
    }
  }

  override reduce({ event, state }: ReduceArgs<typeof ItxContract>): ItxState {
    switch (event.type) {
      case ITX_CREATED:
        // The first certificate wins, so creation is get-or-create whoever appends it again.
        return state.born ? state : { ...state, born: event.payload };
      case CAPABILITY_PROVIDED: {
        // The empty path is the jail's null row and nothing else; null sits nowhere else.
        if ((event.payload.path.length === 0) !== (event.payload.kind === "null")) return state;
        const mount: Mount = {
          ...event.payload,
          providedAtOffset: event.offset,
          disconnected: false,
          provider: { ...(event.source.principal ? { principal: event.source.principal } : {}), ...(event.source.origin ? { origin: event.source.origin } : {}) },
        };
        return { ...state, mounts: { ...state.mounts, [pathKey(mount.path)]: mount } };
      }
      case CAPABILITY_REVOKED: {
        const key = pathKey(event.payload.path);
        const current = state.mounts[key];
        if (!current) return state;
        if (event.payload.providedAtOffset !== undefined && event.payload.providedAtOffset !== current.providedAtOffset) return state;
        const { [key]: _removed, ...mounts } = state.mounts;
        return { ...state, mounts };
      }
      case CAPABILITY_DISCONNECTED: {
        const key = pathKey(event.payload.path);
        const current = state.mounts[key];
        if (!current || current.providedAtOffset !== event.payload.providedAtOffset) return state;
        return { ...state, mounts: { ...state.mounts, [key]: { ...current, disconnected: true } } };
      }
      case RUN_REQUESTED: {
        if (!event.payload.enqueued) return state;
        const run: OpenRun = {
          requestOffset: event.offset,
          script: event.payload.script,
          principal: event.source.principal ?? "platform",
          ...(event.source.origin === undefined ? {} : { origin: event.source.origin }),
          reaction: reactionTo(event),
        };
        return { ...state, runs: { ...state.runs, [String(event.offset)]: run } };
      }
      case RUN_SETTLED: {
        const key = String(event.payload.requestOffset);
        if (!state.runs[key]) return state;
        const { [key]: _settled, ...runs } = state.runs;
        return { ...state, runs };
      }
      default:
        return state;
    }
  }
}

/**
 * The mount whose path is the longest prefix of `path`, and what remains of the path after it. A
 * jail's null row (path []) is the prefix of every path, so it answers whatever nothing longer does.
 */
export function longestProvidedPrefix(state: ItxState, path: readonly string[]): { mount: Mount; remainder: string[] } | undefined {
  for (let length = path.length; length >= 0; length--) {
    const mount = state.mounts[pathKey(path.slice(0, length))];
    if (mount) return { mount, remainder: path.slice(length) };
  }
  return undefined;
}

/** The jail a context's table makes it, if its table holds the null row. */
export function confinementOfState(state: ItxState, path: string): { jail: string; grants: string[] } | undefined {
  if (state.mounts[""]?.kind !== "null") return undefined;
  const grants = Object.values(state.mounts)
    .filter((mount) => mount.kind === "built-in")
    .map((mount) => mount.path[0] as string);
  return { jail: path, grants };
}
