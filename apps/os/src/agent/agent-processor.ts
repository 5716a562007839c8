import type { EventInput, Reaction, StreamEvent } from "iterate/types";
import { errorCode, errorMessage } from "iterate/errors";
import { utf8ByteLength } from "iterate/stream/events";
import { StreamProcessor, foldEvent, type BackgroundContext, type ProcessEventArgs, type ReduceArgs } from "iterate/stream/processor";
import { RUN_REQUESTED, RUN_SETTLED } from "../capability-host/itx-contract.ts";
import { AgentContract, type AgentState, type HistoryItem } from "./agent-contract.ts";
import {
  AGENT_CONFIGURED,
  AGENT_CREATED,
  CONTEXT_ADDED,
  LLM_REQUEST_REQUESTED,
  LLM_REQUEST_SETTLED,
  LOOP_STOPPED,
  MESSAGE_SENT,
} from "./agent-events.ts";
import { scriptInReply } from "./reply-script.ts";
import { LIMITS } from "../limits.ts";

/** The agent's own slug: events it appends carry it as `source.processor`. */
const SELF = AgentContract.slug;

/** What the processor needs from its host: the only ways its decisions leave the fold. */
export interface AgentEffects {
  /** Appends as the agent, stamped with the turn's reaction chain, as one commit, and folds at once. */
  append(reaction: Reaction, ...events: EventInput[]): Promise<StreamEvent[]>;
  /** Asks the model for the request at `requestOffset`, built from `state`; `onDelta` sees the reply as it streams. */
  complete(input: { state: AgentState; requestOffset: number; onDelta(delta: string): void }): Promise<Completion>;
  /** The agent's committed events between the bounds (exclusive), for rebuilding an older request. */
  readEvents(afterOffset: number, beforeOffset: number): Promise<StreamEvent[]>;
  sleep(ms: number): Promise<void>;
  /**
   * A turn is about to ask the model: the host may start now what every request needs and no
   * request decides (describing the agent's surface), so that it runs while the debounce waits.
   */
  prepareRequest?(state: AgentState): void;
}

/** The model's answer to one request. */
export interface Completion {
  text: string;
  usage?: Record<string, number>;
  /** The reply's last streamed frame (an ephemeral event) not yet sent: appended first with the reply's facts. */
  finalFrame?: EventInput;
}

/**
 * The single agent processor. Its fold is the model's whole view (a system lane and a history
 * lane) plus the turn loop's bookkeeping; its side effects, at the head only, are the loop:
 * ask the model (a request appended by reference), record the reply, and hand the reply's script
 * to the context's own run queue. A script's outcome comes back as the next input.
 */
export class AgentProcessor extends StreamProcessor<typeof AgentContract> {
  readonly contract = AgentContract;
  readonly #effects: AgentEffects | undefined;
  /** The newest turn start; the next one runs after it (see #oneAtATime). */
  #turnStarts: Promise<unknown> = Promise.resolve();
  /** Requests their own turn is answering (see #turn), and whether a turn is appending one right now. */
  readonly #answering = new Set<number>();
  #appendingRequest = false;

  /** Without effects the processor only folds (replays, tests). */
  constructor(effects?: AgentEffects) {
    super();
    this.#effects = effects;
  }

  override reduce({ event, state }: ReduceArgs<typeof AgentContract>): AgentState {
    const own = event.source.processor === SELF;
    switch (event.type) {
      case AGENT_CREATED:
        if (state.created) return state;
        return {
          ...state,
          created: { offset: event.offset, principal: event.source.principal ?? "platform" },
          system: event.payload,
          systemChangedAt: event.offset,
        };
      case AGENT_CONFIGURED:
        if (!state.created) return state;
        return { ...state, system: { ...state.system, ...event.payload }, systemChangedAt: event.offset };
      case CONTEXT_ADDED: {
        if (!state.created) return state;
        const { role, content } = event.payload;
        // Only the processor records the model's own words.
        if (role === "assistant" && !own) return state;
        const origin = event.source.origin;
        const from = !own && origin !== undefined && origin !== "/" && origin !== event.streamPath ? origin : undefined;
        const item: HistoryItem = { offset: event.offset, role, content, ...(from ? { from } : {}) };
        const next = withItem(state, item, event.offset);
        if (role === "assistant") return next;
        if (own) {
          // A corrective note: the same turn goes on, as an autonomous one.
          const reaction = state.pending?.reaction ?? state.request?.reaction ?? rootOf(event);
          return { ...next, pending: { offset: event.offset, reaction, autonomous: state.pending?.autonomous ?? true, at: appendedAt(event) }, correctives: state.correctives + 1 };
        }
        // Input from outside starts a fresh budget, continuing the sender's chain of reactions.
        const reaction = event.source.reaction ?? rootOf(event);
        return { ...next, pending: { offset: event.offset, reaction, autonomous: false, at: appendedAt(event) }, autonomousTurns: 0, correctives: 0, stopped: null };
      }
      case LLM_REQUEST_REQUESTED: {
        if (!own || !state.created) return state;
        const reaction = state.pending?.reaction ?? rootOf(event);
        return { ...state, request: { offset: event.offset, reaction }, pending: null, turns: state.turns + 1, autonomousTurns: state.autonomousTurns + 1 };
      }
      case LLM_REQUEST_SETTLED:
        if (state.request?.offset !== event.payload.requestOffset) return state;
        return { ...state, request: null, lastError: event.payload.status === "failed" ? (event.payload.error ?? null) : null };
      case RUN_REQUESTED:
        if (!own || !event.payload.enqueued) return state;
        return { ...state, run: { offset: event.offset, reaction: state.request?.reaction ?? rootOf(event) } };
      case RUN_SETTLED: {
        const run = state.run;
        if (!run || run.offset !== event.payload.requestOffset) return state;
        const settled = { ...state, run: null };
        if (event.payload.status === "failed") {
          const error = event.payload.error ?? { code: "SCRIPT_FAILED", message: "the script failed" };
          const item: HistoryItem = { offset: event.offset, role: "developer", content: clip(`[script failed] ${error.code}: ${error.message}`) };
          const next = withItem(settled, item, event.offset);
          // A runaway chain of reactions is not something another turn should retry.
          if (error.code === "LOOP_LIMIT") return { ...next, stopped: { offset: event.offset, reason: "loop-limit" }, lastError: error };
          return { ...next, pending: { offset: event.offset, reaction: run.reaction, autonomous: true, at: appendedAt(event) } };
        }
        // A script that returned undefined ends the loop: its settled fact carries no result key.
        if (!Object.hasOwn(event.payload, "result")) return settled;
        const item: HistoryItem = { offset: event.offset, role: "developer", content: clip(`[script returned] ${JSON.stringify(event.payload.result)}`) };
        return { ...withItem(settled, item, event.offset), pending: { offset: event.offset, reaction: run.reaction, autonomous: true, at: appendedAt(event) } };
      }
      case MESSAGE_SENT:
        return { ...state, messagesSent: state.messagesSent + 1 };
      case LOOP_STOPPED:
        if (!own) return state;
        return { ...state, stopped: { offset: event.offset, reason: event.payload.reason }, pending: null };
      default:
        return state;
    }
  }

  override async processEvent({ state, delivery, runInBackground }: ProcessEventArgs<typeof AgentContract>): Promise<void> {
    const effects = this.#effects;
    if (!effects || !delivery.caughtUp || !state.created) return;
    if (state.request) {
      const requestOffset = state.request.offset;
      // A turn answers the request it appended itself, under its own claim (#turn). This drives
      // the others: a request whose turn's host died, or one folded from the stream on a replay.
      if (this.#appendingRequest || this.#answering.has(requestOffset)) return;
      await runInBackground(`llm:${requestOffset}`, (work) => this.#answer(effects, work, requestOffset));
      return;
    }
    const pending = state.pending;
    if (!pending || state.run || state.stopped) return;
    if (pending.autonomous && state.autonomousTurns >= LIMITS.AUTONOMOUS_TURNS_MAX) {
      await runInBackground(`stop:${pending.offset}`, async () => {
        await effects.append(pending.reaction, {
          type: LOOP_STOPPED,
          payload: {
            reason: "turn-limit",
            message: `the agent took ${state.autonomousTurns} turns without new input; it waits for a message (AUTONOMOUS_TURNS_MAX)`,
          },
          idempotencyKey: `agent/loop-stopped:${pending.offset}`,
          source: { processor: SELF },
        });
      });
      return;
    }
    await runInBackground(`turn:${pending.offset}`, (work) => this.#turn(effects, work, state, pending));
  }

  /**
   * One turn: waits out the debounce, appends the request, and answers it, all under the turn's
   * one claim: a second claim for the model call would be one more write the request waits for,
   * and one more stream read when it ends. If the host dies, the claim revives it and the at-head
   * pass drives the request it finds folded (`llm:` work), or starts the turn again.
   */
  async #turn(effects: AgentEffects, work: BackgroundContext<typeof AgentContract>, state: AgentState, pending: NonNullable<AgentState["pending"]>): Promise<void> {
    // Debounce: a burst of input is one turn, answered from the newest pending item. The window
    // counts from the input's append, so the time its delivery took is not waited twice. Its
    // timer starts before the surface description is sent for, which runs while it waits.
    const wait = debounceRemaining(pending.at, Date.now());
    const waited = wait > 0 ? effects.sleep(wait) : undefined;
    effects.prepareRequest?.(state);
    await waited;
    // One turn start at a time: each input of a burst starts a turn, and two of them waking
    // together would otherwise both see no request yet and ask twice. The append folds its
    // request before the next one looks (read-your-writes), so later ones find it and stop.
    const requestOffset = await this.#oneAtATime(async () => {
      const now = work.state();
      if (!now.pending || now.request || now.run || now.stopped) return undefined;
      // The append folds the request before it answers: the pass that sees it leaves it to us.
      this.#appendingRequest = true;
      try {
        const [requested] = await effects.append(now.pending.reaction, {
          type: LLM_REQUEST_REQUESTED,
          payload: { afterOffset: now.pending.offset },
          idempotencyKey: `agent/llm-request-requested:${now.pending.offset}`,
          source: { processor: SELF },
        });
        if (requested) this.#answering.add(requested.offset);
        return requested?.offset;
      } finally {
        this.#appendingRequest = false;
      }
    });
    if (requestOffset === undefined) return;
    try {
      await this.#answer(effects, work, requestOffset);
    } finally {
      this.#answering.delete(requestOffset);
    }
  }

  #oneAtATime<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#turnStarts.then(step);
    this.#turnStarts = run.catch(() => undefined);
    return run;
  }

  /** The state the request at `requestOffset` was made from: the fold of the events before it. */
  async stateAt(effects: AgentEffects, requestOffset: number): Promise<AgentState> {
    let state: AgentState = this.contract.initialState();
    let after = 0;
    while (after < requestOffset) {
      const page = await effects.readEvents(after, requestOffset + 1);
      if (page.length === 0) break;
      for (const event of page) {
        const step = foldEvent(this, state, event);
        if (step.kind === "folded") state = step.state as AgentState;
        after = event.offset;
      }
    }
    return state;
  }

  async #answer(effects: AgentEffects, work: BackgroundContext<typeof AgentContract>, requestOffset: number): Promise<void> {
    const current = work.state();
    const request = current.request;
    if (!request || request.offset !== requestOffset) return;
    // By reference: the request is what the committed events up to its offset fold to. The
    // current fold serves unless the system lane changed or compaction dropped items since.
    const moved = current.systemChangedAt > requestOffset || current.compactedAt > requestOffset;
    const state = moved ? await this.stateAt(effects, requestOffset) : current;
    const settledKey = `agent/llm-request-settled:${requestOffset}`;
    let reply: Completion;
    try {
      reply = await effects.complete({ state, requestOffset, onDelta: () => undefined });
    } catch (error) {
      await appendOnce(effects, request.reaction, {
        type: LLM_REQUEST_SETTLED,
        payload: { requestOffset, status: "failed", error: { code: errorCode(error) ?? "UNAVAILABLE", message: clip(errorMessage(error), 4_000) } },
        idempotencyKey: settledKey,
        source: { processor: SELF },
      });
      return;
    }
    const events: EventInput[] = [
      ...(reply.finalFrame ? [reply.finalFrame] : []),
      {
        type: CONTEXT_ADDED,
        payload: { role: "assistant", content: reply.text.length > 0 ? reply.text : "(empty reply)", requestOffset },
        idempotencyKey: `agent/assistant-replied:${requestOffset}`,
        source: { processor: SELF },
      },
    ];
    const parsed = scriptInReply(reply.text);
    if (parsed.ok) {
      events.push({ type: RUN_REQUESTED, payload: { script: parsed.script, enqueued: true }, idempotencyKey: `agent/run-requested:${requestOffset}`, source: { processor: SELF } });
    } else if (current.correctives < LIMITS.CORRECTIVES_MAX) {
      events.push({
        type: CONTEXT_ADDED,
        payload: {
          role: "developer",
          content: `Your reply could not run: ${parsed.problem}. Reply again with exactly one fenced \`\`\`ts block holding one async (itx) => { ... }.`,
          corrective: true,
        },
        idempotencyKey: `agent/corrective-added:${requestOffset}`,
        source: { processor: SELF },
      });
    } else {
      events.push({
        type: LOOP_STOPPED,
        payload: { reason: "no-script", message: `the reply to request ${requestOffset} could not run (${parsed.problem}) after a corrective note (CORRECTIVES_MAX)` },
        idempotencyKey: `agent/loop-stopped:${requestOffset}`,
        source: { processor: SELF },
      });
    }
    events.push({
      type: LLM_REQUEST_SETTLED,
      payload: { requestOffset, status: "succeeded", ...(reply.usage ? { usage: reply.usage } : {}) },
      idempotencyKey: settledKey,
      source: { processor: SELF },
    });
    await appendOnce(effects, request.reaction, ...events);
  }
}

// A rerun after a death may find its facts already written (with another reply): the first stands.
async function appendOnce(effects: AgentEffects, reaction: Reaction, ...events: EventInput[]): Promise<void> {
  try {
    await effects.append(reaction, ...events);
  } catch (error) {
    if (errorCode(error) !== "IDEMPOTENCY_CONFLICT") throw error;
  }
}

function rootOf(event: Pick<StreamEvent, "streamPath" | "offset">): Reaction {
  return { began: `${event.streamPath}#${event.offset}`, round: 0 };
}

// Compaction: the history lane keeps its newest HISTORY_ITEMS_MAX items, and its newest items that
// fit in HISTORY_MAX_BYTES (the newest one always); the system lane is apart.
function withItem(state: AgentState, item: HistoryItem, offset: number): AgentState {
  const history = [...state.history, item];
  // Every item has bytes: a count of 0 beside items is a checkpoint folded before the count was kept.
  const held = state.historyBytes === 0 && state.history.length > 0 ? state.history.reduce((sum, kept) => sum + itemBytes(kept), 0) : state.historyBytes;
  let bytes = held + itemBytes(item);
  let drop = 0;
  while (drop < history.length - 1 && (history.length - drop > LIMITS.HISTORY_ITEMS_MAX || bytes > LIMITS.HISTORY_MAX_BYTES)) {
    bytes -= itemBytes(history[drop] as HistoryItem);
    drop += 1;
  }
  if (drop === 0) return { ...state, history, historyBytes: bytes };
  return { ...state, history: history.slice(drop), historyBytes: bytes, compactedAt: offset };
}

/** An item's size in the checkpoint: its JSON's UTF-8 bytes. */
function itemBytes(item: HistoryItem): number {
  return utf8ByteLength(JSON.stringify(item));
}

function clip(text: string, max: number = LIMITS.SCRIPT_OUTCOME_MAX_LENGTH): string {
  return text.length <= max ? text : `${text.slice(0, max)}... (${text.length - max} more characters)`;
}

/** When `event` was appended, in ms since the epoch (undefined if its time does not parse). */
function appendedAt(event: { createdAt: string }): number | undefined {
  const at = Date.parse(event.createdAt);
  return Number.isFinite(at) ? at : undefined;
}

/**
 * What is left of DEBOUNCE_MS after input appended at `at`, at `now`: the whole window when the
 * time is unknown (state folded before it was kept), never more than the window (a clock that
 * reads earlier than the stream's), never less than nothing.
 */
export function debounceRemaining(at: number | undefined, now: number): number {
  if (at === undefined) return LIMITS.DEBOUNCE_MS;
  return Math.min(LIMITS.DEBOUNCE_MS, Math.max(0, LIMITS.DEBOUNCE_MS - (now - at)));
}
