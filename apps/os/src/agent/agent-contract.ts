import { z } from "zod";
import { defineProcessorContract } from "iterate/stream/processor";
import { RUN_REQUESTED, RUN_SETTLED } from "../capability-host/itx-contract.ts";
import {
  AGENT_CONFIGURED,
  AGENT_CREATED,
  CONTEXT_ADDED,
  LLM_REQUEST_REQUESTED,
  LLM_REQUEST_SETTLED,
  LLM_RESPONSE_FRAME,
  LOOP_STOPPED,
  MESSAGE_SENT,
} from "./agent-events.ts";
import { LIMITS } from "../limits.ts";

const SECRET_PATH = /^\/secrets(\/[A-Za-z0-9_.~-]+)+$/;

/** Which model answers an agent. The key is a secret's path, substituted only in the egress pipe. */
export const llmConfigSchema = z.discriminatedUnion("provider", [
  z.strictObject({
    provider: z.literal("openai-compatible"),
    /** The API root, e.g. https://api.openai.com/v1; requests go to `${baseUrl}/chat/completions`. */
    baseUrl: z.url({ protocol: /^https?$/ }).max(2_048),
    model: z.string().min(1).max(256),
    /** A secret path such as /secrets/openai: sent as `Authorization: Bearer getSecret("/secrets/openai")`. */
    apiKey: z.string().max(256).regex(SECRET_PATH, "apiKey names a secret (/secrets/<name>), never the key itself").optional(),
    temperature: z.number().min(0).max(2).optional(),
  }),
  z.strictObject({
    provider: z.literal("workers-ai"),
    model: z.string().min(1).max(256),
  }),
]);
export type LlmConfig = z.infer<typeof llmConfigSchema>;

const reactionSchema = z.strictObject({ began: z.string(), round: z.number().int() });

const configSchema = z.strictObject({
  llm: llmConfigSchema.optional(),
  systemPrompt: z.string().max(LIMITS.SYSTEM_PROMPT_MAX_LENGTH).optional(),
});

/** One item of the model-visible history. `from` names the context a non-human sender wrote from. */
const itemSchema = z.strictObject({
  offset: z.number().int(),
  role: z.enum(["user", "developer", "assistant"]),
  content: z.string(),
  from: z.string().optional(),
});
export type HistoryItem = z.infer<typeof itemSchema>;

const contextAddedSchema = z.strictObject({
  role: z.enum(["user", "developer", "assistant"]),
  content: z.string().min(1).max(LIMITS.REPLY_MAX_LENGTH),
  /** Assistant items: the request they answer. */
  requestOffset: z.number().int().positive().optional(),
  /** A platform note asking the model to follow the reply contract. */
  corrective: z.boolean().optional(),
});

const errorSchema = z.strictObject({ code: z.string().max(64), message: z.string().max(4_000) });

/**
 * The agent processor's contract: a provider-neutral projection of everything the model may see
 * (a system lane compaction never drops, a history lane), and the turn loop's bookkeeping. Every
 * field is a fold of the agent's stream, so a fresh host replaying it reaches the same state.
 */
export const AgentContract = defineProcessorContract({
  slug: "agent",
  version: "1.0.0",
  description: "Folds an agent's stream into its model context and drives its turns.",
  stateSchema: z.object({
    created: z.strictObject({ offset: z.number().int(), principal: z.string() }).nullable().default(null),
    /** The system lane: what the agent was created and configured with. */
    system: configSchema.default({}),
    /** Offset of the newest change to the system lane. */
    systemChangedAt: z.number().int().default(0),
    /** The history lane, oldest first; compaction drops from the front. */
    history: z.array(itemSchema).default([]),
    /** UTF-8 bytes of the history lane's items as JSON (0 in checkpoints older than the count: counted again). */
    historyBytes: z.number().int().default(0),
    /** Offset of the newest event whose fold dropped history items. */
    compactedAt: z.number().int().default(0),
    /** Input the model has not seen yet: the newest such item, and the reaction its turn continues. */
    pending: z
      .strictObject({
        offset: z.number().int(),
        reaction: reactionSchema,
        autonomous: z.boolean(),
        /** When the input was appended (ms since the epoch, the stream's clock): the debounce counts from it. */
        at: z.number().optional(),
      })
      .nullable()
      .default(null),
    /** The model request in flight (its offset is the request id). */
    request: z.strictObject({ offset: z.number().int(), reaction: reactionSchema }).nullable().default(null),
    /** The script run in flight, requested by this agent. */
    run: z.strictObject({ offset: z.number().int(), reaction: reactionSchema }).nullable().default(null),
    /** Model turns since the last input from outside, and corrective items since the last valid reply. */
    autonomousTurns: z.number().int().default(0),
    correctives: z.number().int().default(0),
    turns: z.number().int().default(0),
    messagesSent: z.number().int().default(0),
    lastError: errorSchema.nullable().default(null),
    stopped: z.strictObject({ offset: z.number().int(), reason: z.string() }).nullable().default(null),
  }),
  events: {
    [AGENT_CREATED]: configSchema,
    [AGENT_CONFIGURED]: configSchema,
    [CONTEXT_ADDED]: contextAddedSchema,
    [LLM_REQUEST_REQUESTED]: z.strictObject({ afterOffset: z.number().int() }),
    [LLM_RESPONSE_FRAME]: z.strictObject({ requestOffset: z.number().int(), index: z.number().int(), delta: z.string() }),
    [LLM_REQUEST_SETTLED]: z.strictObject({
      requestOffset: z.number().int().positive(),
      status: z.enum(["succeeded", "failed"]),
      error: errorSchema.optional(),
      usage: z.record(z.string(), z.number()).optional(),
    }),
    [MESSAGE_SENT]: z.strictObject({ text: z.string().max(LIMITS.MESSAGE_MAX_LENGTH) }),
    [LOOP_STOPPED]: z.strictObject({
      reason: z.enum(["turn-limit", "no-script", "loop-limit", "llm-failed"]),
      message: z.string().max(4_000),
    }),
    [RUN_REQUESTED]: z.strictObject({ script: z.string().min(1).max(64_000), enqueued: z.boolean().optional() }),
    [RUN_SETTLED]: z.strictObject({
      requestOffset: z.number().int().positive(),
      status: z.enum(["succeeded", "failed"]),
      result: z.unknown().optional(),
      error: errorSchema.optional(),
    }),
  },
  consumes: [AGENT_CREATED, AGENT_CONFIGURED, CONTEXT_ADDED, LLM_REQUEST_REQUESTED, LLM_REQUEST_SETTLED, MESSAGE_SENT, LOOP_STOPPED, RUN_REQUESTED, RUN_SETTLED],
  emits: [LLM_REQUEST_REQUESTED, LLM_RESPONSE_FRAME, LLM_REQUEST_SETTLED, CONTEXT_ADDED, RUN_REQUESTED, LOOP_STOPPED],
});

export type AgentState = ReturnType<typeof AgentContract.initialState>;
