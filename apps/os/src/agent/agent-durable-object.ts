import type { EventInput, Reaction, StreamEvent } from "iterate/types";
import { StreamProcessorDurableObject } from "iterate/sdk";
import { ItxRpcTarget } from "../itx/itx-rpc-target.ts";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import { coordinateOfObject } from "../stream/coordinate.ts";
import type { AgentState } from "./agent-contract.ts";
import { AGENT_SUBSCRIPTION_KEY, LLM_RESPONSE_FRAME } from "./agent-events.ts";
import { AgentProcessor, type AgentEffects, type Completion } from "./agent-processor.ts";
import { renderSurface, requestMessages, type SurfaceDescription } from "./agent-prompt.ts";
import { defaultLlm } from "./default-llm.ts";
import { FrameSender } from "./frame-sender.ts";
import { complete } from "./llm-provider.ts";

/** How old a surface description started ahead of a request may be and still serve it. */
const PREPARED_SURFACE_MAX_AGE_MS = 1_000;

/**
 * Hosts one agent's processor, named by the agent's coordinate `<projectId>:/agents/<name>`. The
 * agent's stream wakes it through the `agent` subscription that `create()` appends; its state is
 * the processor's fold of that stream, so any host replaying the stream reaches the same state.
 */
export class AgentDurableObject extends StreamProcessorDurableObject<Env> {
  readonly processor: AgentProcessor;
  readonly #projectId: string;
  readonly #path: string;
  /** The agent's surface, described while a turn's debounce waits (see AgentEffects.prepareRequest). */
  #preparedSurface: { at: number; description: Promise<SurfaceDescription> } | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ({ projectId: this.#projectId, path: this.#path } = coordinateOfObject(ctx.id, "an agent host"));
    const effects: AgentEffects = {
      append: (reaction, ...events) => this.#append(reaction, ...events),
      complete: (input) => this.#complete(input.state, input.requestOffset),
      readEvents: async (afterOffset, beforeOffset) => this.#stream().getEvents({ afterOffset, beforeOffset, limit: 500 }),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      prepareRequest: (state) => {
        const description = this.#itx(state).__describe() as Promise<SurfaceDescription>;
        description.catch(() => undefined);
        this.#preparedSurface = { at: Date.now(), description };
      },
    };
    this.processor = new AgentProcessor(effects);
  }

  /** The agent's folded state, for `__describe()` and tests. */
  async state(): Promise<{ offset: number; state: AgentState }> {
    const snapshot = await this.snapshot();
    return { offset: snapshot.offset, state: snapshot.state as AgentState };
  }

  #stream() {
    return streamStub(this.env.STREAM, `${this.#projectId}:${this.#path}`);
  }

  // A turn cut off by a restart: the alarm its claim armed wakes this host through the stream
  // capability the agent's stream would hand it. Only for that: the host keeps the handed one
  // otherwise, so a stream's idle session is not released (see StreamProcessorDurableObject).
  protected override reviveStream(): StreamRpcTarget {
    return new StreamRpcTarget(this.#stream(), { platform: "processor-host:agent" });
  }

  // The agent acts as itself in its own context: origin is its path, principal whoever created it.
  #itx(state: AgentState, reaction?: Reaction): ItxRpcTarget {
    return new ItxRpcTarget({
      env: this.env,
      principal: state.created?.principal ?? "platform",
      projectId: this.#projectId,
      path: this.#path,
      origin: this.#path,
      ...(reaction ? { reaction } : {}),
    });
  }

  async #append(reaction: Reaction, ...events: EventInput[]): Promise<StreamEvent[]> {
    const state = (await this.snapshot()).state as AgentState;
    const written = await this.#stream().append({
      events,
      stamp: { principal: state.created?.principal ?? "platform", origin: this.#path, platform: "agent", reaction },
      foldedBy: AGENT_SUBSCRIPTION_KEY,
    });
    // Read-your-writes: fold our own facts now rather than when the stream's delivery brings them
    // (a reply's final frame, appended beside its facts, is for live viewers only).
    await this.ingest(written.filter((event) => event.ephemeral !== true));
    return written;
  }

  // The description started ahead of this request when it is recent (a mount provided in between
  // reaches the next request, as one provided while the model thinks does); otherwise a fresh one.
  async #surface(itx: ItxRpcTarget): Promise<SurfaceDescription> {
    const prepared = this.#preparedSurface;
    this.#preparedSurface = undefined;
    const fresh = () => itx.__describe() as Promise<SurfaceDescription>;
    if (!prepared || Date.now() - prepared.at > PREPARED_SURFACE_MAX_AGE_MS) return fresh();
    return prepared.description.catch(fresh);
  }

  async #complete(state: AgentState, requestOffset: number): Promise<Completion> {
    const itx = this.#itx(state);
    const description = await this.#surface(itx);
    const messages = requestMessages(state, requestOffset, renderSurface(description));
    const frame = (delta: string, index: number): EventInput => ({
      type: LLM_RESPONSE_FRAME,
      payload: { requestOffset, index, delta },
      ephemeral: true,
      source: { processor: "agent" },
    });
    const frames = new FrameSender(async (delta, index) => this.#stream().append({ events: [frame(delta, index)], stamp: { origin: this.#path, platform: "agent" } }));
    try {
      // Within LLM_TIMEOUT_MS: past it the request fails with TIMEOUT and stops reading the model's answer.
      const reply = await complete({
        config: state.system.llm ?? defaultLlm(this.env),
        messages,
        fetch: (request) => itx.fetch(request),
        ...(this.env.AI ? { ai: this.env.AI } : {}),
        onDelta: (delta) => frames.push(delta),
      });
      // The reply's last frame rides in the append of the reply's facts, ahead of them: one
      // round trip fewer on the turn, and live viewers still see it before the reply settles.
      const rest = await frames.takeRest();
      return rest ? { ...reply, finalFrame: frame(rest.delta, rest.index) } : reply;
    } finally {
      await frames.close();
    }
  }
}
