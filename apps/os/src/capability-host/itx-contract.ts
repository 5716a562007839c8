import { z } from "zod";
import { StreamProcessor, defineProcessorContract, type ReduceArgs } from "iterate/stream/processor";
import { pathKey } from "./capability-path.ts";

export const ITX_CREATED = "events.iterate.com/itx/created";
export const CAPABILITY_PROVIDED = "events.iterate.com/itx/capability-provided";
export const CAPABILITY_REVOKED = "events.iterate.com/itx/capability-revoked";
export const CAPABILITY_DISCONNECTED = "events.iterate.com/itx/capability-disconnected";

/** Longest `instructions` on a mount: describe() returns them for every mount in the chain. */
export const INSTRUCTIONS_MAX_LENGTH = 4_000;
/** Longest `types` on a mount. */
export const TYPES_MAX_LENGTH = 16_000;
/** Most steps in an expression recipe. */
export const EXPRESSION_STEPS_MAX = 8;
/** Most mounts one context may hold: the table is one checkpoint (at most 2 MB). */
export const MOUNTS_MAX = 2_000;

const segments = z.array(z.string()).max(32);

/** One step of an expression recipe: call `path` on the previous value (`args` omitted: the call's own args). */
export const expressionStepSchema = z.strictObject({ path: segments.min(1), args: z.array(z.unknown()).max(16).optional() });
export type ExpressionStep = z.infer<typeof expressionStepSchema>;

/** How a live capability is dispatched: call the function, replay onto members, or call({ path, args }). */
export const liveShapeSchema = z.enum(["function", "members", "call"]);
export type LiveShape = z.infer<typeof liveShapeSchema>;

const providedSchema = z.strictObject({
  path: segments.min(1),
  kind: z.enum(["live", "itx-expression"]),
  instructions: z.string().max(INSTRUCTIONS_MAX_LENGTH).optional(),
  types: z.string().max(TYPES_MAX_LENGTH).optional(),
  live: z.strictObject({ shape: liveShapeSchema, connectionId: z.string().max(128) }).optional(),
  expression: z.array(expressionStepSchema).min(1).max(EXPRESSION_STEPS_MAX).optional(),
});

const mountSchema = providedSchema.extend({
  providedAtOffset: z.number().int(),
  disconnected: z.boolean(),
  provider: z.strictObject({ principal: z.string().optional(), origin: z.string().optional() }),
});
export type Mount = z.infer<typeof mountSchema>;

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
  }),
  events: {
    [ITX_CREATED]: birthSchema,
    [CAPABILITY_PROVIDED]: providedSchema,
    [CAPABILITY_REVOKED]: z.strictObject({ path: segments.min(1), providedAtOffset: z.number().int().optional() }),
    [CAPABILITY_DISCONNECTED]: z.strictObject({ path: segments.min(1), providedAtOffset: z.number().int() }),
  },
  consumes: [ITX_CREATED, CAPABILITY_PROVIDED, CAPABILITY_REVOKED, CAPABILITY_DISCONNECTED],
  emits: [CAPABILITY_DISCONNECTED],
});

export type ItxState = ReturnType<typeof ItxContract.initialState>;

/** The pure fold of a context's own events. */
export class ItxCore extends StreamProcessor<typeof ItxContract> {
  readonly contract = ItxContract;

  override reduce({ event, state }: ReduceArgs<typeof ItxContract>): ItxState {
    switch (event.type) {
      case ITX_CREATED:
        // The first certificate wins, so creation is get-or-create whoever appends it again.
        return state.born ? state : { ...state, born: event.payload };
      case CAPABILITY_PROVIDED: {
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
      default:
        return state;
    }
  }
}

/** The mount whose path is the longest prefix of `path`, and what remains of the path after it. */
export function longestProvidedPrefix(state: ItxState, path: readonly string[]): { mount: Mount; remainder: string[] } | undefined {
  for (let length = path.length; length > 0; length--) {
    const mount = state.mounts[pathKey(path.slice(0, length))];
    if (mount) return { mount, remainder: path.slice(length) };
  }
  return undefined;
}
