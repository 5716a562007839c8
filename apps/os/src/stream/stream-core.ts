import { z } from "zod";
import type { StreamEvent } from "iterate/types";
import { ItxError } from "iterate/errors";
import { StreamProcessor, defineProcessorContract, type ReduceArgs } from "iterate/stream/processor";
import type { ProcessorSubscription } from "./hosted-delivery.ts";
import { LIMITS, limitDetails } from "../limits.ts";
import { rowBytes } from "../limits/checkpoint-table.ts";
import { ItxContract, RUN_REQUESTED, RUN_SETTLED, type OpenRun } from "../capability-host/itx-contract.ts";
import { reactionTo } from "./reaction.ts";

/** The one event type the Stream itself folds: a row of its subscription table, set or cleared. */
export const SUBSCRIPTION_CONFIGURED = "events.iterate.com/itx/subscription-configured";



export interface SubscriptionConfigured {
  key: string;
  subscription: ProcessorSubscription | null;
}

/** The capability rows the Stream folds itself: a jail's null row and its grant of `append`. */
export const CAPABILITY_PROVIDED = "events.iterate.com/itx/capability-provided";
export const CAPABILITY_REVOKED = "events.iterate.com/itx/capability-revoked";

/**
 * The version of the Stream's fold of its own events: a checkpoint of another version is dropped
 * and the fold replayed. 3: the jail rows are folded by the capability host's rules, their offsets
 * kept (2 folded appends without their offsets). 4: open enqueued runs are counted.
 */
export const STREAM_CORE_VERSION = 4;

/** Types the Stream folds inside each append. */
export const STREAM_CORE_TYPES = [SUBSCRIPTION_CONFIGURED, CAPABILITY_PROVIDED, CAPABILITY_REVOKED, RUN_REQUESTED, RUN_SETTLED];

/**
 * The Stream's own folded state: its hosted-processor subscriptions by key, and whether its
 * context is a jail that refuses writers (capability-host/jail.ts).
 */
export interface StreamCoreState {
  subscriptions: Record<string, ProcessorSubscription>;
  /** The context holds the jail's null row: only the platform appends, unless `append` is granted. */
  jailed?: boolean;
  /** The offset of the jail's null row, which a revoke naming another offset leaves in place. */
  jailedAt?: number;
  appendGranted?: boolean;
  /** The offset of the row at `["append"]` (a grant when its kind is "built-in"). */
  appendRowAt?: number;
  /**
   * Enqueued runs not settled yet, by request offset: the UTF-8 bytes of each one's row as the host keeps it.
   * The capability host keeps each open run, script and all, in its checkpoint; the Stream refuses
   * the append that would pass RUNS_OPEN_MAX or RUNS_OPEN_MAX_BYTES (see `openRunsRefusal`).
   */
  openRuns?: Record<string, number>;
}

export function initialStreamCoreState(): StreamCoreState {
  return { subscriptions: {} };
}

/** Whether an ordinary writer (no platform stamp) may append to a stream in this state. */
export function opensToWriters(state: StreamCoreState): boolean {
  return state.jailed !== true || state.appendGranted === true;
}

const bad = (why: string) => new ItxError("INVALID_ARGUMENT", `${SUBSCRIPTION_CONFIGURED}: ${why}`);

const KEY = /^[a-z0-9][a-z0-9._:/-]{0,127}$/;
const BINDING = /^[A-Z][A-Z0-9_]{0,63}$/;
const SLUG = /^[a-z][a-z0-9-]{0,63}$/;

/**
 * Validates a subscription-configured payload at append time, so a bad row never enters the log.
 * `hasBinding` says whether this deployment has a Durable Object namespace under that name;
 * `projectId` is the stream's own project, the only one whose hosts a row may name.
 */
export function parseSubscriptionConfigured(payload: unknown, hasBinding: (name: string) => boolean, projectId: string): SubscriptionConfigured {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) throw bad("payload must be an object");
  const { key, subscription, ...rest } = payload as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw bad(`unknown field(s) ${Object.keys(rest).join(", ")}`);
  if (typeof key !== "string" || !KEY.test(key)) throw bad("key must be 1-128 characters of a-z 0-9 . _ : / -");
  if (subscription === null) return { key, subscription: null };
  if (typeof subscription !== "object" || subscription === undefined || Array.isArray(subscription)) {
    throw bad("subscription must be an object or null");
  }
  const { type, binding, host, processor, ...more } = subscription as Record<string, unknown>;
  if (Object.keys(more).length > 0) throw bad(`unknown subscription field(s) ${Object.keys(more).join(", ")}`);
  if (type !== "processor") throw bad('subscription.type must be "processor"');
  if (typeof binding !== "string" || !BINDING.test(binding)) throw bad("subscription.binding must name a processor host binding");
  if (!hasBinding(binding)) throw bad(`this deployment has no processor host binding ${binding}`);
  if (typeof host !== "string" || host.length === 0 || host.length > 512) throw bad("subscription.host must be 1-512 characters");
  // A host folds streams of its own project only: a row naming another project's host is refused.
  if (!host.startsWith(`${projectId}:`) || host.length === projectId.length + 1) {
    throw bad(`subscription.host must name a host in this stream's project (${projectId}:<path>)`);
  }
  if (typeof processor !== "string" || !SLUG.test(processor)) throw bad("subscription.processor must be a contract slug");
  return { key, subscription: { type, binding, host, processor } };
}

/** The pure fold of the Stream's own events. Foreign types leave the state as it is. */
export function reduceStreamCore(state: StreamCoreState, event: StreamEvent): StreamCoreState {
  if (event.type === CAPABILITY_PROVIDED || event.type === CAPABILITY_REVOKED) return reduceJail(state, event);
  if (event.type === RUN_REQUESTED || event.type === RUN_SETTLED) return reduceOpenRuns(state, event);
  if (event.type !== SUBSCRIPTION_CONFIGURED) return state;
  const { key, subscription } = event.payload as SubscriptionConfigured;
  const subscriptions = { ...state.subscriptions };
  if (subscription === null) delete subscriptions[key];
  else subscriptions[key] = subscription;
  return { ...state, subscriptions };
}

// Only the two rows that decide who may write here; every other capability row is the host's
// business. Folded by the capability host's own rules (ItxCore in itx-contract.ts: its schema, a
// row at [] only of kind "null", a revoke naming another row's offset changes nothing), so that
// the Stream, which refuses writers, and the host, which answers for the jail, never disagree on
// whether the context is one.
function reduceJail(state: StreamCoreState, event: StreamEvent): StreamCoreState {
  const check = ItxContract.parsePayload(event);
  if (!check.ok) return state;
  const { path, kind, providedAtOffset } = check.payload as { path: string[]; kind?: string; providedAtOffset?: number };
  const jailRow = path.length === 0;
  const appendRow = path.length === 1 && path[0] === "append";
  if (!jailRow && !appendRow) return state;
  if (event.type === CAPABILITY_PROVIDED) {
    if (jailRow !== (kind === "null")) return state;
    return jailRow ? { ...state, jailed: true, jailedAt: event.offset } : { ...state, appendGranted: kind === "built-in", appendRowAt: event.offset };
  }
  // Every row this fold holds has its offset (a checkpoint of an older fold is replayed: STREAM_CORE_VERSION).
  const current = jailRow ? state.jailedAt : state.appendRowAt;
  if (current === undefined || (providedAtOffset !== undefined && providedAtOffset !== current)) return state;
  const next = { ...state };
  if (jailRow) {
    next.jailed = false;
    delete next.jailedAt;
  } else {
    next.appendGranted = false;
    delete next.appendRowAt;
  }
  return next;
}

// The open enqueued runs, as the capability host folds them (ItxCore in itx-contract.ts: a
// run-requested its schema accepts, with `enqueued`, opens a run under its offset; a run-settled
// naming that offset closes it), so the Stream's count is the host's.
function reduceOpenRuns(state: StreamCoreState, event: StreamEvent): StreamCoreState {
  const check = ItxContract.parsePayload(event);
  if (!check.ok) return state;
  const runs = state.openRuns ?? {};
  if (event.type === RUN_REQUESTED) {
    const { script, enqueued } = check.payload as { script: string; enqueued?: boolean };
    if (enqueued !== true) return state;
    // The row as the host keeps it (OpenRun), under its key.
    const key = String(event.offset);
    const row: OpenRun = {
      requestOffset: event.offset,
      script,
      principal: event.source.principal ?? "platform",
      ...(event.source.origin === undefined ? {} : { origin: event.source.origin }),
      reaction: reactionTo(event),
    };
    return { ...state, openRuns: { ...runs, [key]: rowBytes(key, row) } };
  }
  const key = String((check.payload as { requestOffset: number }).requestOffset);
  if (runs[key] === undefined) return state;
  const { [key]: _settled, ...open } = runs;
  return { ...state, openRuns: open };
}

/** The bytes the open runs take in the host's checkpoint (at most RUNS_OPEN_MAX of them to add up). */
export function openRunBytes(state: StreamCoreState): number {
  return Object.values(state.openRuns ?? {}).reduce((sum, bytes) => sum + bytes, 0);
}

/**
 * RESOURCE_EXHAUSTED when `state` holds more open enqueued runs than their limits allow. A writer
 * other than the platform stops RUNS_OPEN_PLATFORM_RESERVE runs and RUNS_OPEN_PLATFORM_RESERVE_BYTES
 * short of them, so others' runs can never refuse an agent's own.
 */
export function openRunsRefusal(state: StreamCoreState, path: string, platform: boolean): ItxError | undefined {
  const countMax = LIMITS.RUNS_OPEN_MAX - (platform ? 0 : LIMITS.RUNS_OPEN_PLATFORM_RESERVE);
  const bytesMax = LIMITS.RUNS_OPEN_MAX_BYTES - (platform ? 0 : LIMITS.RUNS_OPEN_PLATFORM_RESERVE_BYTES);
  if (Object.keys(state.openRuns ?? {}).length > countMax) {
    return new ItxError("RESOURCE_EXHAUSTED", `${path} has ${countMax} enqueued runs waiting; append again once some have settled`, {
      details: limitDetails("RUNS_OPEN_MAX"),
    });
  }
  if (openRunBytes(state) > bytesMax) {
    return new ItxError("RESOURCE_EXHAUSTED", `the enqueued runs waiting in ${path} would take more than ${bytesMax} bytes; append again once some have settled`, {
      details: limitDetails("RUNS_OPEN_MAX_BYTES"),
    });
  }
  return undefined;
}

const subscriptionSchema = z.strictObject({
  type: z.literal("processor"),
  binding: z.string().regex(BINDING),
  host: z.string().min(1).max(512),
  processor: z.string().regex(SLUG),
});

/**
 * The Stream's own contract: its subscription table is the fold of subscription-configured rows.
 * `parseSubscriptionConfigured` applies the same rules at append time, plus the binding check
 * that needs the deployment's env.
 */
export const StreamCoreContract = defineProcessorContract({
  slug: "stream-core",
  version: "1.0.0",
  description: "Folds itx/subscription-configured rows into the stream's processor subscriptions, a jail's null row and append grant, and the open enqueued runs.",
  stateSchema: z.object({
    subscriptions: z.record(z.string(), subscriptionSchema).default({}),
    jailed: z.boolean().optional(),
    jailedAt: z.number().int().optional(),
    appendGranted: z.boolean().optional(),
    appendRowAt: z.number().int().optional(),
    openRuns: z.record(z.string(), z.number().int()).optional(),
  }),
  events: {
    [SUBSCRIPTION_CONFIGURED]: z.strictObject({ key: z.string().regex(KEY), subscription: subscriptionSchema.nullable() }),
    // Loose here: reduceJail checks these rows against the capability host's own schemas.
    [CAPABILITY_PROVIDED]: z.object({ path: z.array(z.string()), kind: z.string() }),
    [CAPABILITY_REVOKED]: z.object({ path: z.array(z.string()) }),
    // Loose here too: reduceOpenRuns checks them against the capability host's schemas.
    [RUN_REQUESTED]: z.object({ script: z.string() }),
    [RUN_SETTLED]: z.object({ requestOffset: z.number() }),
  },
  consumes: [SUBSCRIPTION_CONFIGURED, CAPABILITY_PROVIDED, CAPABILITY_REVOKED, RUN_REQUESTED, RUN_SETTLED],
  emits: [],
});

/** The Stream's core processor; the Stream Durable Object folds it synchronously inside each append. */
export class StreamCore extends StreamProcessor<typeof StreamCoreContract> {
  readonly contract = StreamCoreContract;

  override reduce({ event, state }: ReduceArgs<typeof StreamCoreContract>) {
    return reduceStreamCore(state, event as StreamEvent);
  }
}

/**
 * Whether `name` is a binding of `env` that may host stream processors: the deployment names them
 * in PROCESSOR_HOST_BINDINGS (wrangler.jsonc; the workerd tests add their own hosts), so no other
 * Durable Object (the streams, secrets) can ever be woken as a host, whatever a row names.
 */
export function isProcessorHostBinding(env: { PROCESSOR_HOST_BINDINGS?: string }, name: string): boolean {
  const listed = (env.PROCESSOR_HOST_BINDINGS ?? "").split(",").map((binding) => binding.trim());
  const value = (env as Record<string, unknown>)[name];
  return listed.includes(name) && typeof value === "object" && value !== null && "getByName" in value;
}

/**
 * Binding names that subscription rows written before decision 0016 carry, and the binding each
 * now is. Stored rows are facts and are never rewritten, so a wake reads them through this map:
 * streams created by an older build keep waking their hosts after the rename.
 */
const RENAMED_PROCESSOR_HOST_BINDINGS: Readonly<Record<string, string>> = {
  CAPABILITY_HOST_PROCESSORS: "CAPABILITY_HOST",
  AGENT_PROCESSORS: "AGENT",
  PROJECT_PROCESSORS: "PROJECT",
};

/** The binding a stored subscription row's `binding` names today (see RENAMED_PROCESSOR_HOST_BINDINGS). */
export function currentHostBinding(binding: string): string {
  return (Object.hasOwn(RENAMED_PROCESSOR_HOST_BINDINGS, binding) && RENAMED_PROCESSOR_HOST_BINDINGS[binding]) || binding;
}
