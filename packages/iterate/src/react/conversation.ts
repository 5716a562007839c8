import type { StreamEvent } from "../types.ts";

/** One entry of an agent's conversation, as the dashboard and `useAgent` show it. */
export type ConversationEntry =
  /** A person's message (`agent/context-added`, role user). */
  | { kind: "user"; offset: number; text: string; from: string }
  /** What the agent said to people (`agent/message-sent`). */
  | { kind: "agent"; offset: number; text: string }
  /** A script the agent asked to run (`itx/run-requested`). */
  | { kind: "script"; offset: number; script: string }
  /** A script's outcome (`itx/run-settled`): its result as JSON, or `CODE: message`. */
  | { kind: "result"; offset: number; text: string; status: "succeeded" | "failed" }
  /** The loop ended without a reply, or the model request failed. */
  | { kind: "stopped"; offset: number; reason: string };

/** The conversation so far, and the reply the model is streaming now (from ephemeral frames). */
export interface Conversation {
  entries: ConversationEntry[];
  /** Text of the reply being streamed, or null when no model request is in flight. */
  streaming: string | null;
  /** True from a model request until its settled fact. */
  thinking: boolean;
}

// The agent-stream events the conversation is folded from (docs/agents.md, "One turn, as events").
const CONTEXT_ADDED = "events.iterate.com/agent/context-added";
const LLM_REQUEST_REQUESTED = "events.iterate.com/agent/llm-request-requested";
const LLM_RESPONSE_FRAME = "events.iterate.com/agent/llm-response-frame";
const LLM_REQUEST_SETTLED = "events.iterate.com/agent/llm-request-settled";
const MESSAGE_SENT = "events.iterate.com/agent/message-sent";
const LOOP_STOPPED = "events.iterate.com/agent/loop-stopped";
const RUN_REQUESTED = "events.iterate.com/itx/run-requested";
const RUN_SETTLED = "events.iterate.com/itx/run-settled";

const text = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

/** An empty conversation, the fold's start. */
export function emptyConversation(): Conversation {
  return { entries: [], streaming: null, thinking: false };
}

/**
 * Folds one agent-stream event into the conversation. Pure: `useAgent` calls it for every event
 * the live subscription delivers, history first, so a reload shows what a live viewer saw (minus
 * the ephemeral frames, which were never stored).
 */
export function foldConversation(state: Conversation, event: StreamEvent): Conversation {
  const payload = (event.payload ?? {}) as Record<string, unknown>;
  const add = (entry: ConversationEntry): Conversation => ({ ...state, entries: [...state.entries, entry] });
  switch (event.type) {
    case CONTEXT_ADDED: {
      if (payload.role === "user") return add({ kind: "user", offset: event.offset, text: text(payload.content), from: event.source.origin ?? "" });
      if (payload.role === "assistant") return { ...state, streaming: null };
      return state;
    }
    case LLM_REQUEST_REQUESTED:
      return { ...state, thinking: true, streaming: "" };
    case LLM_RESPONSE_FRAME:
      return typeof payload.delta === "string" ? { ...state, streaming: (state.streaming ?? "") + payload.delta } : state;
    case LLM_REQUEST_SETTLED: {
      const settled = { ...state, thinking: false, streaming: null };
      if (payload.status === "succeeded") return settled;
      return { ...settled, entries: [...state.entries, { kind: "stopped", offset: event.offset, reason: `model request ${text(payload.status)}` }] };
    }
    case MESSAGE_SENT:
      return add({ kind: "agent", offset: event.offset, text: text(payload.text) });
    case RUN_REQUESTED:
      return typeof payload.script === "string" ? add({ kind: "script", offset: event.offset, script: payload.script }) : state;
    case RUN_SETTLED: {
      if (payload.status === "succeeded") {
        const shown = payload.result === undefined ? "undefined" : JSON.stringify(payload.result);
        return add({ kind: "result", offset: event.offset, text: shown, status: "succeeded" });
      }
      const error = (payload.error ?? {}) as { code?: unknown; message?: unknown };
      return add({ kind: "result", offset: event.offset, text: `${text(error.code ?? "SCRIPT_FAILED")}: ${text(error.message ?? "the script failed")}`, status: "failed" });
    }
    case LOOP_STOPPED:
      return add({ kind: "stopped", offset: event.offset, reason: text(payload.reason ?? "the loop stopped") });
    default:
      return state;
  }
}
