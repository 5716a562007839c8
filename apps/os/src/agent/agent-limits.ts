/** Every limit of the agent domain, with what it protects. Each has a test that crosses it. */
export const AGENT_LIMITS = {
  /** Longest message text (`message`, `ask`, `chat.sendMessage`): each lands in the model's context. */
  MESSAGE_MAX_LENGTH: 32_000,
  /** Longest per-agent system prompt. */
  SYSTEM_PROMPT_MAX_LENGTH: 16_000,
  /** Model turns in a row without a new message from outside: stops an agent that never returns undefined. */
  AUTONOMOUS_TURNS_MAX: 8,
  /** Corrective items in a row for replies without exactly one valid script block. */
  CORRECTIVES_MAX: 1,
  /** Items the history lane keeps; older ones are compacted away (the system lane never is). */
  HISTORY_ITEMS_MAX: 200,
  /** Characters of a script's result or error kept in the developer item the model reads. */
  SCRIPT_OUTCOME_MAX_LENGTH: 8_000,
  /** Characters a model reply may have; a longer stream is cut and the request fails. */
  REPLY_MAX_LENGTH: 64_000,
  /** How long the processor waits after the last input before asking the model (a burst is one turn). */
  DEBOUNCE_MS: 5,
  /** The longest a model request may take. */
  LLM_TIMEOUT_MS: 120_000,
  /** Default and largest `ask` wait. */
  ASK_TIMEOUT_MS: 120_000,
} as const;
