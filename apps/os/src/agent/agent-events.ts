/** The event types of the agent domain (seed 001 "Agents"). */
export const AGENT_CREATED = "events.iterate.com/agent/created";
export const AGENT_CONFIGURED = "events.iterate.com/agent/configured";
export const CONTEXT_ADDED = "events.iterate.com/agent/context-added";
export const LLM_REQUEST_REQUESTED = "events.iterate.com/agent/llm-request-requested";
/** Ephemeral: one slice of a streamed model reply, for live viewers only. */
export const LLM_RESPONSE_FRAME = "events.iterate.com/agent/llm-response-frame";
export const LLM_REQUEST_SETTLED = "events.iterate.com/agent/llm-request-settled";
export const MESSAGE_SENT = "events.iterate.com/agent/message-sent";
export const LOOP_STOPPED = "events.iterate.com/agent/loop-stopped";
/** One row per agent in the project's agent directory stream, for `itx.agents.list()`. */
export const AGENT_LISTED = "events.iterate.com/agent/listed";

/** The stream that lists a project's agents. */
export const AGENT_DIRECTORY_PATH = "/agents";

/** The key of an agent stream's subscription to its agent's processor host (see AgentRpcTarget.create). */
export const AGENT_SUBSCRIPTION_KEY = "agent";
