// Agents, secrets, dynamic workers and egress: the built-ins of a context beyond its own table. Part of the contract of record (types.ts).
import type { Description } from "./discovery.ts";
import type { RepoMasks } from "./repos.ts";
import type { Stream } from "./streams.ts";

/** Which model an agent asks. The key is a secret's path, sent as a placeholder; never the key itself. */
export type LlmConfig =
  | { provider: "openai-compatible"; baseUrl: string; model: string; apiKey?: string }
  | { provider: "workers-ai"; model?: string };

export interface AgentConfig {
  llm?: LlmConfig;
  systemPrompt?: string;
}

/** `itx.agents`. */
export interface Agents {
  /** A handle on the agent at `path` (`/agents/<name>`); creates nothing. */
  get(path: string): Agent;
  list(): Array<{ path: string; createdAt: string }>;
}

/** One agent: a stream whose processor asks a model and runs the script each reply holds. */
export interface Agent {
  __describe(): Description & { path: string; whoami: string; agent: Record<string, unknown> };
  /** Get-or-create: the context, the processor subscription and `agent/created`. */
  create(input?: AgentConfig): { path: string; offset: number; created: boolean };
  configure(input: AgentConfig): { offset: number };
  /** A message into the agent's context; it answers in its own time. */
  message(text: string): { offset: number };
  /** A message, then the agent's next `chat.sendMessage` (text null when its loop ended without one). */
  ask(input: { message: string; timeoutMs?: number }): { text: string | null; offset: number };
  whoami(): { projectId: string; path: string; origin: string; principal: string };
  stream: Stream;
  chat: AgentChat;
  invokeCapability(input: { path: string[]; args: unknown[] }): unknown;
}

export interface AgentChat {
  /** Appends `agent/message-sent { text }`. */
  sendMessage(text: string): { offset: number };
}

/** `itx.secrets`. */
export interface Secrets {
  get(path: string): Secret;
}

/** One secret: material goes in and never comes out. */
export interface Secret {
  /** Stores material (encrypted) and the URLs it may be sent to. */
  update(input: { material: string; egress: { urls: string[] } }): { version: number };
  /** Metadata only, never material: whether it is set, its version (0 before the first update), where it may go, how often the egress pipe used it. */
  __describe(): Description & { path: string; placeholder: string; set: boolean; version: number; egress: { urls: string[] }; updatedAt: string | null; uses: number };
}

/** What `itx.workers.get` loads: a stateless worker, or a Durable Object class as a facet of this context. */
export type WorkerRef =
  | { source: WorkerSource; entrypoint?: string; props?: Record<string, unknown> }
  | { source: WorkerSource; durableObject: { className: string; key: string } };

/**
 * A worker's source: files given inline, or read from a repository of the project. A `branch` is
 * late-bound (each load reads its head then); a `commit` is pinned.
 */
export type WorkerSource =
  | { files: Record<string, string>; entryPoint?: string }
  | ({ repo: string; entryPoint?: string } & RepoMasks & ({ branch: string; commit?: never } | { commit: string; branch?: never }));

/** `itx.workers`. */
export interface Workers {
  /** A stub on the loaded worker's entrypoint (or the facet). */
  get(ref: WorkerRef): unknown;
}

/** `itx.egress`. */
export interface Egress {
  fetch(input: string | Request, init?: RequestInit): Response;
  /** A live replacement for this context's fetch until released; it sees placeholders, never material. */
  intercept(handler: (request: Request) => Response | Promise<Response>): { release(): boolean };
}
