import type { EventSource } from "iterate/types";
import { ItxError } from "iterate/errors";
import type { Caller } from "../capability-host/capability-host-api.ts";
import type { ItxRpcTarget } from "../itx/itx-rpc-target.ts";
import { parseStreamPath } from "../stream/coordinate.ts";
import { llmConfigSchema } from "./agent-contract.ts";
import { LIMITS, limitDetails } from "../limits.ts";

// What the agent surface is bound to, and the checks on what callers hand it.

/** What an agent handle acts with: the caller's identity, fixed when the handle was minted. */
export interface AgentScope {
  env: Env;
  projectId: () => Promise<string>;
  caller: Caller;
  /** What writes through this handle are stamped with (the caller's origin, principal, reaction). */
  stamp: EventSource;
  /** An itx handle on a context of this project, for the agent's own scope. */
  at(path: string): ItxRpcTarget;
}

/** How the agent surface names itself on the facts it writes (see stream/write-authority.ts). */
export const AGENTS_SURFACE = "agents";

/** Checks an agent path: `/agents/<name>` (deeper paths allowed). */
export function parseAgentPath(path: unknown): string {
  const parsed = parseStreamPath(path);
  if (!parsed.startsWith("/agents/")) {
    throw new ItxError("INVALID_ARGUMENT", `an agent lives at /agents/<name>, got ${JSON.stringify(parsed)}`);
  }
  return parsed;
}

/** True when `path` is an agent's context. */
export function isAgentPath(path: string): boolean {
  return path.startsWith("/agents/") && path.length > "/agents/".length;
}

export function parseConfig(input: unknown, call: string): { llm?: unknown; systemPrompt?: string } {
  if (typeof input !== "object" || input === null || Array.isArray(input)) throw new ItxError("INVALID_ARGUMENT", `${call} takes { llm?, systemPrompt? }`);
  const { llm, systemPrompt, ...rest } = input as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `${call} has no field(s) ${Object.keys(rest).join(", ")}`);
  const config: { llm?: unknown; systemPrompt?: string } = {};
  if (llm !== undefined) {
    const parsed = llmConfigSchema.safeParse(llm);
    if (!parsed.success) {
      throw new ItxError("INVALID_ARGUMENT", `llm: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "llm"}: ${issue.message}`).join("; ")}`);
    }
    config.llm = parsed.data;
  }
  if (systemPrompt !== undefined) {
    if (typeof systemPrompt !== "string") throw new ItxError("INVALID_ARGUMENT", "systemPrompt is a string");
    if (systemPrompt.length > LIMITS.SYSTEM_PROMPT_MAX_LENGTH) {
      throw new ItxError("INVALID_ARGUMENT", `systemPrompt is at most ${LIMITS.SYSTEM_PROMPT_MAX_LENGTH} characters`, {
        details: limitDetails("SYSTEM_PROMPT_MAX_LENGTH"),
      });
    }
    config.systemPrompt = systemPrompt;
  }
  return config;
}

export function parseMessage(text: unknown, call: string): string {
  if (typeof text !== "string" || text.trim().length === 0) throw new ItxError("INVALID_ARGUMENT", `${call} takes a non-empty string`);
  if (text.length > LIMITS.MESSAGE_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `a message is at most ${LIMITS.MESSAGE_MAX_LENGTH} characters`, { details: limitDetails("MESSAGE_MAX_LENGTH") });
  }
  return text;
}
