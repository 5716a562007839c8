import { useCallback, useMemo } from "react";
import type { AgentConfig } from "../types.ts";
import { emptyConversation, foldConversation, type Conversation } from "./conversation.ts";
import { useItx } from "./provider.ts";
import { useStream } from "./use-stream.ts";

export interface AgentState extends Conversation {
  /** False until the agent's history has been read. */
  ready: boolean;
  error: unknown;
  /** Says something to the agent; it answers in its own time (the reply arrives as state). */
  send(text: string): Promise<void>;
  /** Get-or-create the agent (its model, system prompt). */
  create(config?: AgentConfig): Promise<void>;
}

/**
 * The agent at `path` (`/agents/<name>`) with its conversation as state: people's messages, the
 * scripts it runs and their results, what it says, and the reply the model is streaming now.
 * Follows the agent's stream live.
 *
 * @example
 * const agent = useAgent("/agents/support");
 * agent.entries.map((entry) => entry.kind === "agent" ? <p>{entry.text}</p> : null);
 * await agent.send("What changed today?");
 */
export function useAgent(path: string): AgentState {
  const itx = useItx();
  const { events, ready, error } = useStream(path, { live: true, maxEvents: 5000 });
  const conversation = useMemo(() => events.reduce(foldConversation, emptyConversation()), [events]);
  const send = useCallback(async (text: string) => {
    await itx.agents.get(path).message(text);
  }, [itx, path]);
  const create = useCallback(async (config?: AgentConfig) => {
    await itx.agents.get(path).create(config);
  }, [itx, path]);
  return { ...conversation, ready, error, send, create };
}
