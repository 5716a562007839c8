import { RpcTarget } from "cloudflare:workers";
import type { StreamEvent } from "iterate/types";
import { ItxError, errorCode } from "iterate/errors";
import { RUN_REQUESTED, RUN_SETTLED } from "../capability-host/itx-contract.ts";
import { ensureRootChild } from "../itx/context-lifecycle.ts";
import { installInvokeFallback } from "../itx/invoke-fallback.ts";
import type { ItxRpcTarget } from "../itx/itx-rpc-target.ts";
import { deferredBackend, StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import { SUBSCRIPTION_CONFIGURED } from "../stream/stream-core.ts";
import type { AgentState } from "./agent-contract.ts";
import {
  AGENT_CONFIGURED,
  AGENT_CREATED,
  AGENT_DIRECTORY_PATH,
  AGENT_LISTED,
  AGENT_SUBSCRIPTION_KEY,
  CONTEXT_ADDED,
  LLM_REQUEST_SETTLED,
  LOOP_STOPPED,
  MESSAGE_SENT,
} from "./agent-events.ts";
import { AgentChatRpcTarget } from "./agent-chat-rpc-target.ts";
import { AGENTS_SURFACE, isAgentPath, parseAgentPath, parseConfig, parseMessage, type AgentScope } from "./agent-input.ts";
import { LIMITS, limitDetails } from "../limits.ts";

/** The binding whose Durable Objects host agents' processors. */
export const AGENT_BINDING = "AGENT";

/** `itx.agents`: the project's agents. */
export class AgentsRpcTarget extends RpcTarget {
  readonly #scope: AgentScope;

  constructor(scope: AgentScope) {
    super();
    this.#scope = scope;
  }

  /** A handle on the agent at `path`. Nothing is created until `create()`. */
  get(path: unknown): AgentRpcTarget {
    return new AgentRpcTarget(this.#scope, parseAgentPath(path));
  }

  /** Every agent created in this project, oldest first. */
  async list(): Promise<Array<{ path: string; createdAt: string }>> {
    const projectId = await this.#scope.projectId();
    const directory = streamStub(this.#scope.env.STREAM, `${projectId}:${AGENT_DIRECTORY_PATH}`);
    const agents: Array<{ path: string; createdAt: string }> = [];
    let after = 0;
    for (;;) {
      const page = await directory.getEvents({ afterOffset: after, types: [AGENT_LISTED], limit: 500 });
      for (const event of page) {
        // Anyone may append to the directory stream; only the platform's own rows count.
        const path = (event.payload as { path?: unknown }).path;
        if (event.source.platform === "agents" && typeof path === "string") agents.push({ path, createdAt: event.createdAt });
      }
      const last = page.at(-1);
      if (!last) return agents; // A short page is not the end: pages stop at READ_PAGE_MAX_BYTES too.
      after = last.offset;
    }
  }
}

/**
 * One agent: a stream at `/agents/<name>` plus the agent processor. Its context is an ordinary
 * context, so every other property is a capability call in the agent's scope.
 */
export class AgentRpcTarget extends RpcTarget {
  readonly #scope: AgentScope;
  readonly #path: string;
  // An agent, once created, stays: its creation is a fact on a stream that cannot be cleared (it
  // feeds the agent's processor). So a handle that saw it once need not look again.
  #seenCreated = false;

  constructor(scope: AgentScope, path: string) {
    super();
    this.#scope = scope;
    this.#path = path;
  }

  /**
   * Makes the agent (get-or-create): its context, the processor subscription on its stream, and
   * `agent/created` with the model and system prompt. A second create answers `created: false`.
   */
  async create(input: unknown = {}): Promise<{ path: string; offset: number; created: boolean }> {
    const config = parseConfig(input, "create");
    const projectId = await this.#scope.projectId();
    const stream = await this.#stream();
    const existing = await stream.getByIdempotencyKey("agent/created");
    if (existing) return { path: this.#path, offset: existing.offset, created: false };
    await ensureRootChild(this.#scope.env, { projectId, path: this.#path, name: this.#path.slice("/agents/".length), caller: this.#scope.caller }, "agent");
    let created: StreamEvent | undefined;
    try {
      [, created] = await (await this.#stream(AGENTS_SURFACE)).append(
        {
          type: SUBSCRIPTION_CONFIGURED,
          payload: {
            key: AGENT_SUBSCRIPTION_KEY,
            subscription: { type: "processor", binding: AGENT_BINDING, host: `${projectId}:${this.#path}`, processor: "agent" },
          },
          idempotencyKey: "itx/subscription-configured:agent",
        },
        { type: AGENT_CREATED, payload: config, idempotencyKey: "agent/created" },
      );
    } catch (error) {
      // Created at the same moment by someone else, with another configuration: theirs stands.
      if (errorCode(error) !== "IDEMPOTENCY_CONFLICT") throw error;
      const winner = await stream.getByIdempotencyKey("agent/created");
      return { path: this.#path, offset: winner?.offset ?? 0, created: false };
    }
    await new StreamRpcTarget(streamStub(this.#scope.env.STREAM, `${projectId}:${AGENT_DIRECTORY_PATH}`), { platform: "agents" }).append({
      type: AGENT_LISTED,
      payload: { path: this.#path },
      idempotencyKey: `agent/listed:${this.#path}`,
    });
    return { path: this.#path, offset: created?.offset ?? 0, created: true };
  }

  /**
   * Changes the model or the system prompt from the next request on. Only the agent itself and code
   * acting as the project's root may: another agent's script cannot rewrite this agent's mind.
   */
  async configure(input: unknown): Promise<{ offset: number }> {
    const origin = this.#scope.caller.origin;
    if (origin !== "/" && origin !== this.#path) {
      throw new ItxError("PERMISSION_DENIED", `code acting as ${origin} cannot configure ${this.#path}: only the agent itself and the project's root can`);
    }
    const config = parseConfig(input, "configure");
    if (Object.keys(config).length === 0) throw new ItxError("INVALID_ARGUMENT", "configure takes { llm?, systemPrompt? } with at least one of them");
    await this.#mustExist();
    const [event] = await (await this.#stream(AGENTS_SURFACE)).append({ type: AGENT_CONFIGURED, payload: config });
    return { offset: event?.offset ?? 0 };
  }

  /**
   * Adds a message to the agent's context: a user item from a person's session, or a developer
   * item carrying the sender when another agent writes. The agent answers in its own time.
   */
  async message(text: unknown): Promise<{ offset: number }> {
    const content = parseMessage(text, "message");
    await this.#mustExist();
    const origin = this.#scope.caller.origin;
    const role = isAgentPath(origin) && origin !== this.#path ? "developer" : "user";
    const [event] = await (await this.#stream()).append({ type: CONTEXT_ADDED, payload: { role, content } });
    return { offset: event?.offset ?? 0 };
  }

  /**
   * Sends a message and waits for the agent's next `itx.chat.sendMessage`. Answers `text: null`
   * when the agent ended its turn without saying anything; a stopped loop or a failed model
   * request is a coded error; past `timeoutMs`, TIMEOUT.
   */
  async ask(input: unknown): Promise<{ text: string | null; offset: number }> {
    const { message, timeoutMs, ...rest } = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
    if (typeof input !== "object" || input === null || Object.keys(rest).length > 0) {
      throw new ItxError("INVALID_ARGUMENT", "ask takes { message, timeoutMs? }");
    }
    const wait = timeoutMs ?? LIMITS.ASK_TIMEOUT_MS;
    if (typeof wait !== "number" || !Number.isInteger(wait) || wait < 1 || wait > LIMITS.ASK_TIMEOUT_MS) {
      throw new ItxError("INVALID_ARGUMENT", `timeoutMs is an integer from 1 to ${LIMITS.ASK_TIMEOUT_MS}`, { details: limitDetails("ASK_TIMEOUT_MS") });
    }
    const deadline = Date.now() + wait;
    const sent = await this.message(message);
    const stream = await this.#stream();
    let after = sent.offset;
    // Woken only by what can end the wait. Whether a settled run was the agent's own (anyone may
    // run or enqueue scripts on this stream) is looked up when one settles, not by waking on
    // every run request: those land while the turn's script starts, on the turn's own path.
    for (;;) {
      const remaining = Math.max(0, deadline - Date.now());
      const event = await stream.waitForEvent({ types: [MESSAGE_SENT, LOOP_STOPPED, LLM_REQUEST_SETTLED, RUN_SETTLED], afterOffset: after, timeoutMs: remaining });
      after = event.offset;
      const payload = event.payload as Record<string, unknown>;
      // A settled fact of a turn that began before this message (its run settled after the message
      // landed) ends that earlier turn, not this one.
      if ((event.type === RUN_SETTLED || event.type === LLM_REQUEST_SETTLED) && typeof payload.requestOffset === "number" && payload.requestOffset < sent.offset) continue;
      if (event.type === MESSAGE_SENT) return { text: String(payload.text), offset: event.offset };
      if (event.type === LOOP_STOPPED && event.source.processor === "agent") {
        throw new ItxError(payload.reason === "loop-limit" ? "LOOP_LIMIT" : "UNAVAILABLE", `the agent stopped: ${String(payload.message)}`, { details: { offset: event.offset } });
      }
      if (event.type === LLM_REQUEST_SETTLED && payload.status === "failed") {
        const error = payload.error as { code?: string; message?: string } | undefined;
        throw new ItxError((error?.code as "UNAVAILABLE" | undefined) ?? "UNAVAILABLE", `the agent's model request failed: ${error?.message ?? "unknown"}`, {
          details: { offset: event.offset },
        });
      }
      if (event.type === RUN_SETTLED && typeof payload.requestOffset === "number" && (await isAgentRun(stream, payload.requestOffset))) {
        const error = payload.error as { code?: string; message?: string } | undefined;
        if (error?.code === "LOOP_LIMIT") throw new ItxError("LOOP_LIMIT", error.message ?? "a chain of reactions was stopped", { details: { offset: event.offset } });
        if (payload.status === "succeeded" && !Object.hasOwn(payload, "result")) return { text: null, offset: event.offset };
      }
    }
  }

  /** The agent's identity, model, loop status and surface, from its stream's fold. */
  async __describe() {
    const projectId = await this.#scope.projectId();
    const { offset, state } = await this.#scope.env.AGENT.getByName(`${projectId}:${this.#path}`).state();
    return {
      kind: "agent",
      whoami: `agent ${projectId}:${this.#path}`,
      projectId,
      path: this.#path,
      instructions: state.created
        ? "An agent: message(text) adds to its context, ask({ message }) waits for its reply; it answers by running scripts in its own context."
        : "No agent here yet: create({ llm?, systemPrompt? }) makes one. A stream path alone is not an agent.",
      children: {
        create: "create({ llm?, systemPrompt? }) -> { path, offset, created }",
        configure: "configure({ llm?, systemPrompt? }): from the next request on",
        message: "message(text) -> { offset }",
        ask: "ask({ message, timeoutMs? }) -> { text, offset }: the agent's next chat message",
        stream: "the agent's stream: every turn, as events",
        chat: "chat.sendMessage(text): speak as the agent",
        itx: "the agent's context",
      },
      agent: describeState(state, offset),
    };
  }

  /** Project, path, origin and principal of the agent's context as this handle reaches it. */
  whoami(): ReturnType<ItxRpcTarget["whoami"]> {
    return this.#scope.at(this.#path).whoami();
  }

  /**
   * The agent's stream (its context's own stream), written as the caller. A StreamRpcTarget, not
   * a Promise of one: Cap'n Web cannot call through a getter's Promise (`agent.stream.head()`).
   */
  get stream(): StreamRpcTarget {
    const { env, stamp } = this.#scope;
    return new StreamRpcTarget(deferredBackend(async () => streamStub(env.STREAM, `${await this.#scope.projectId()}:${this.#path}`)), stamp);
  }

  /** Speaking as the agent: what the agent's scripts use to answer people. */
  get chat(): AgentChatRpcTarget {
    return new AgentChatRpcTarget(this.#scope, this.#path);
  }

  /** The agent's context. */
  get itx() {
    return this.#scope.at(this.#path);
  }

  /** Any other property: a capability call in the agent's scope. */
  invokeCapability(input: { path: unknown; args?: unknown }): Promise<unknown> {
    return this.#scope.at(this.#path).invokeCapability(input);
  }

  /** This agent's stream, written as the caller; `platform` when the surface writes its own facts. */
  async #stream(platform?: string): Promise<StreamRpcTarget> {
    const projectId = await this.#scope.projectId();
    const stamp = platform === undefined ? this.#scope.stamp : { ...this.#scope.stamp, platform };
    return new StreamRpcTarget(streamStub(this.#scope.env.STREAM, `${projectId}:${this.#path}`), stamp);
  }

  async #mustExist(): Promise<void> {
    if (this.#seenCreated) return;
    const created = await (await this.#stream()).getByIdempotencyKey("agent/created");
    if (!created) throw new ItxError("NOT_FOUND", `no agent at ${this.#path}: create() it first (a stream path alone is not an agent)`);
    this.#seenCreated = true;
  }
}
installInvokeFallback(AgentRpcTarget);

/** True when the run requested at `offset` on `stream` was requested by the agent processor itself. */
async function isAgentRun(stream: StreamRpcTarget, offset: number): Promise<boolean> {
  const [requested] = await stream.getEvents({ afterOffset: offset - 1, beforeOffset: offset + 1, limit: 1 });
  return requested?.type === RUN_REQUESTED && requested.source.processor === "agent";
}

function describeState(state: AgentState, offset: number) {
  if (!state.created) return { created: false as const, offset };
  const status = state.stopped ? "stopped" : state.request ? "thinking" : state.run ? "running-script" : state.pending ? "queued" : "idle";
  return {
    created: true as const,
    offset,
    status,
    llm: state.system.llm ?? "deployment default",
    systemPrompt: state.system.systemPrompt ?? null,
    turns: state.turns,
    messagesSent: state.messagesSent,
    historyItems: state.history.length,
    lastError: state.lastError,
    stopped: state.stopped,
  };
}
