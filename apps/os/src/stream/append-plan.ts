import type { EventSource, Reaction, StreamEvent } from "iterate/types";
import { ItxError } from "iterate/errors";
import { STREAM_LIMITS, parseReaction, sameEventBody, validateAppendBatch, validateAppendText, type ValidEventInput } from "iterate/stream/events";
import type { PendingEvent } from "./journal.ts";
import { isRunaway, mayDeclareReaction } from "./reaction.ts";
import { RUN_SETTLED } from "../capability-host/itx-contract.ts";
import { STREAM_CORE_TYPES, SUBSCRIPTION_CONFIGURED, openRunsRefusal, opensToWriters, parseSubscriptionConfigured, reduceStreamCore, type StreamCoreState } from "./stream-core.ts";
import { mayUseKey, mayWrite, notYourKey, notYoursToWrite, processorOfStamp } from "./write-authority.ts";
import { LIMITS, limitDetails } from "../limits.ts";

/** What an append is checked against: the stream as it stands, read-only. */
export interface AppendContext {
  projectId: string;
  path: string;
  head: number;
  core: StreamCoreState;
  byIdempotencyKey(key: string): StreamEvent | undefined;
  /** Whether the deployment has a Durable Object namespace of this name (subscription rows). */
  hasBinding(name: string): boolean;
}

/**
 * Event inputs that the code which made them inside this Worker proved valid, so an append skips
 * `validateAppendBatch` (the Durable Streams JSON path: `checkedEventsOfJson`). Nothing from
 * outside can claim it: an RPC argument arrives as plain data, never as an instance of this class.
 */
export class CheckedEventInputs {
  readonly inputs: readonly ValidEventInput[];

  constructor(inputs: ValidEventInput[]) {
    if (inputs.length === 0 || inputs.length > STREAM_LIMITS.APPEND_MAX_EVENTS) throw new Error(`checked inputs hold 1 to ${STREAM_LIMITS.APPEND_MAX_EVENTS} events`);
    this.inputs = inputs;
  }
}

/** An append as the Stream receives it. `stamp` is the platform's, never the writer's. */
export interface AppendInput {
  events: unknown[] | string | CheckedEventInputs;
  expectedOffset?: number;
  stamp: EventSource;
}

/**
 * What to do with an append: commit `pending` (each answer an index into it, a stored event for an
 * idempotent repeat, or an ephemeral event), or refuse it as the next round of a runaway chain.
 */
export type AppendPlan =
  | { kind: "runaway"; reaction: Reaction }
  | {
      kind: "commit";
      pending: PendingEvent[];
      answers: Array<StreamEvent | number>;
      ephemeralAt: Array<{ index: number; event: StreamEvent }>;
      /** The stream's own state after the batch (the same object when the batch does not change it). */
      core: StreamCoreState;
    };

/**
 * Checks an append against everything but the journal's write and decides what it stores. Pure:
 * it reads the context and throws coded errors, so a refused append changes nothing. The order of
 * the checks is part of the contract: input shape, expected head, who may write these types and
 * keys, the jail, runaway chains, then per-event rules (reactions, subscriptions, idempotency).
 */
export function planAppend(context: AppendContext, request: AppendInput): AppendPlan {
    // Either parsed here or a serialized RPC argument: the Stream holds the only reference, so
    // payloads are checked in place rather than copied (or not walked at all when their text
    // proves them valid: validateAppendText).
    const events = request.events;
    const inputs =
      events instanceof CheckedEventInputs ? events.inputs : typeof events === "string" ? validateAppendText(events) : validateAppendBatch(events, { owned: true });
    const expected = request.expectedOffset;
    if (expected !== undefined && (!Number.isSafeInteger(expected) || expected < 0)) {
      throw new ItxError("INVALID_ARGUMENT", `expectedOffset must be a non-negative integer, got ${String(expected)}`);
    }
    if (expected !== undefined && expected !== context.head) {
      throw new ItxError("OFFSET_CONFLICT", `expected the head at ${expected}, but it is at ${context.head}`, {
        details: { expectedOffset: expected, head: context.head },
      });
    }
    const stamp = trustedSource(request.stamp);
    // Platform types first: a refused batch writes nothing, not even a loop-limit fact.
    // A batch is usually many events of few types: each type's write rule is looked up once.
    const allowedTypes = new Set<string>();
    for (const [index, input] of inputs.entries()) {
      if (!allowedTypes.has(input.type)) {
        if (!mayWrite(input.type, stamp)) throw notYoursToWrite(input.type, index);
        allowedTypes.add(input.type);
      }
      if (input.idempotencyKey !== undefined && !mayUseKey(input.idempotencyKey, stamp)) throw notYourKey(input.idempotencyKey, index);
    }
    if (stamp.platform === undefined && !opensToWriters(context.core)) {
      throw new ItxError("PERMISSION_DENIED", `${context.path} is a jail: nothing appends into it unless the jail grants append`, {
        details: { reason: "jail" },
      });
    }
    if (stamp.reaction && isRunaway(stamp)) return { kind: "runaway", reaction: stamp.reaction };
    const processor = processorOfStamp(stamp);
    for (const [index, input] of inputs.entries()) {
      const declared = input.source?.reaction;
      if (declared === undefined) continue;
      if (!mayDeclareReaction(stamp)) {
        throw new ItxError("INVALID_ARGUMENT", `event ${index}: source.reaction is stamped by the platform, not by writers`, { details: { field: "source.reaction" } });
      }
      // A run's settle records the outcome of work the stream already admitted: refused as a
      // runaway, the run would stay open for good (in the host's state and the Stream's count).
      if (isRunaway({ reaction: declared }) && input.type !== RUN_SETTLED) return { kind: "runaway", reaction: declared };
    }
    const answers: Array<StreamEvent | number> = [];
    const pending: PendingEvent[] = [];
    const ephemeralAt: Array<{ index: number; event: StreamEvent }> = [];
    const keysInCall = new Map<string, PendingEvent>();
    let core = context.core;
    // Events that add nothing to the stamp share one source object (nothing mutates a source once
    // planned, and the journal writes a shared one's JSON once).
    const plainSource: EventSource = { ...stamp };
    for (const [index, input] of inputs.entries()) {
      // Only a processor host the platform runs labels its writes, and only with its own slug;
      // anyone else's source values are dropped.
      const source: EventSource = input.source?.processor && processor ? { ...stamp, processor } : input.source?.reaction ? { ...stamp } : plainSource;
      if (input.source?.reaction) source.reaction = input.source.reaction;
      if (input.ephemeral) {
        const event: StreamEvent = {
          streamPath: context.path,
          offset: context.head + pending.length,
          type: input.type,
          payload: input.payload === undefined ? {} : input.payload,
          createdAt: "",
          source,
          ephemeral: true,
        };
        ephemeralAt.push({ index, event });
        answers.push(event);
        continue;
      }
      // A subscription row is checked even when it repeats one already stored (and then changes nothing).
      const configured = input.type === SUBSCRIPTION_CONFIGURED ? parseSubscriptionConfigured(input.payload, context.hasBinding, context.projectId) : undefined;
      if (input.idempotencyKey !== undefined) {
        const stored = context.byIdempotencyKey(input.idempotencyKey);
        const earlier = keysInCall.get(input.idempotencyKey);
        const existing = stored ?? earlier;
        if (existing) {
          if (!sameEventBody(existing, input)) {
            throw new ItxError(
              "IDEMPOTENCY_CONFLICT",
              `idempotency key ${JSON.stringify(input.idempotencyKey)} was used for a different event${stored ? ` at offset ${stored.offset}` : ""}`,
              { details: { index, idempotencyKey: input.idempotencyKey, ...(stored ? { offset: stored.offset } : {}) } },
            );
          }
          answers.push(stored ?? pending.indexOf(existing));
          continue;
        }
      }
      // The core folds what is written, at the offset it is written at (a jail row's revoke names
      // its row by offset); an idempotent repeat, answered from what is stored, folds nothing.
      if (STREAM_CORE_TYPES.includes(input.type)) {
        const folding = { type: input.type, payload: configured ?? input.payload, offset: context.head + pending.length + 1, source, streamPath: context.path } as StreamEvent;
        const next = reduceStreamCore(core, folding);
        if (configured !== undefined && Object.keys(next.subscriptions).length > LIMITS.SUBSCRIPTIONS_MAX) {
          throw new ItxError("INVALID_ARGUMENT", `a stream has at most ${LIMITS.SUBSCRIPTIONS_MAX} processor subscriptions`, {
            details: limitDetails("SUBSCRIPTIONS_MAX"),
          });
        }
        // Only an append that opens a run can pass the limits; settling one never is refused.
        if (Object.keys(next.openRuns ?? {}).length > Object.keys(core.openRuns ?? {}).length) {
          const refusal = openRunsRefusal(next, context.path, stamp.platform !== undefined);
          if (refusal) throw refusal;
        }
        core = next;
      }
      const event: PendingEvent = { type: input.type, payload: input.payload === undefined ? {} : input.payload, source };
      if (input.idempotencyKey !== undefined) {
        event.idempotencyKey = input.idempotencyKey;
        keysInCall.set(input.idempotencyKey, event);
      }
      answers.push(pending.length);
      pending.push(event);
    }

    return { kind: "commit", pending, answers, ephemeralAt, core };
}

/** Keeps exactly the known fields of a stamp, so nothing else rides along. */
export function trustedSource(stamp: EventSource | undefined): EventSource {
  const source: EventSource = {};
  if (typeof stamp?.origin === "string") source.origin = stamp.origin;
  if (typeof stamp?.principal === "string") source.principal = stamp.principal;
  if (typeof stamp?.platform === "string") source.platform = stamp.platform;
  const reaction = parseReaction(stamp?.reaction);
  if (reaction) source.reaction = reaction;
  return source;
}

