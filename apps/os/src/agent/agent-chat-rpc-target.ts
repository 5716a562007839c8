import { RpcTarget } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import { MESSAGE_SENT } from "./agent-events.ts";
import { AGENTS_SURFACE, parseMessage, type AgentScope } from "./agent-input.ts";

/** `itx.chat` (and `agent.chat`): messages from the agent to the people it serves. */
export class AgentChatRpcTarget extends RpcTarget {
  readonly #scope: AgentScope;
  readonly #path: string;

  constructor(scope: AgentScope, path: string) {
    super();
    this.#scope = scope;
    this.#path = path;
  }

  /** Appends `agent/message-sent { text }` to the agent's stream. Only the agent's own code speaks as it. */
  async sendMessage(text: unknown): Promise<{ offset: number }> {
    const content = parseMessage(text, "sendMessage");
    if (this.#scope.caller.origin !== this.#path) {
      throw new ItxError("PERMISSION_DENIED", `only code running as ${this.#path} speaks as that agent; this handle acts as ${this.#scope.caller.origin}`);
    }
    const projectId = await this.#scope.projectId();
    const stamp = { ...this.#scope.stamp, platform: AGENTS_SURFACE };
    const stream = new StreamRpcTarget(streamStub(this.#scope.env.STREAM, `${projectId}:${this.#path}`), stamp);
    const [event] = await stream.append({ type: MESSAGE_SENT, payload: { text: content } });
    return { offset: event?.offset ?? 0 };
  }
}
