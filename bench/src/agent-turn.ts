import type { StreamEvent } from "iterate/types";
import type { LoopbackModelServer } from "./peer/loopback-model.ts";

export const RUN_SETTLED = "events.iterate.com/itx/run-settled";
const TIMEOUT_MS = 30_000;
/** What the loopback model's script says; every turn checks it arrived. */
export const SPOKEN = "ok";

/** An agent to drive: its handle, its stream, and the loopback model it asks. */
export interface AgentUnderTest {
  // oxlint-disable-next-line typescript/no-explicit-any -- capability paths are dynamic by design
  agent: any;
  // oxlint-disable-next-line typescript/no-explicit-any -- as above
  stream: any;
  model: LoopbackModelServer;
}

/** One timed turn. Times are Node-side milliseconds with the model server's own time taken off. */
export interface Turn {
  /** From `ask` to its answer (the turn's `agent/message-sent`). */
  ask?: number;
  /** From the message to `itx/run-settled` seen from Node. */
  runSettled?: number;
  /** The model server's own time for this turn's request. */
  model: number;
  /** The turn's segments from the stream's own `createdAt` stamps, in ms. */
  segments: Segments;
}

/** The turn as the stream saw it, between the commits of its events. */
export interface Segments {
  /** The message -> `agent/llm-request-requested`: delivery to the processor and the debounce. */
  messageToRequest: number;
  /** -> `agent/llm-request-settled`: describe, prompt, egress, the model, reply parsing, the commit. */
  requestToSettled: number;
  /** -> `agent/message-sent`: the script's load and start, and its `itx.chat.sendMessage`. */
  settledToMessageSent: number;
  /** -> `itx/run-settled`: the script's end and its settled fact. */
  messageSentToRunSettled: number;
  /** `agent/llm-request-settled` -> `itx/run-settled`: the script, the two above together. */
  settledToRunSettled: number;
  /** The whole turn on the stream: the message -> `itx/run-settled`. */
  total: number;
}

/**
 * How a turn is timed. `ask`: `agent.ask` alone, as a user calls it. `message`: `agent.message`,
 * then `waitForEvent` for `itx/run-settled` after the message's offset. `both`: `ask` with that
 * wait sent beside it, so one turn (a cold one, which cannot be repeated) gives both figures.
 */
export type TurnStyle = "ask" | "message" | "both";

/** Runs one turn on an idle agent and answers when the turn has settled. */
export async function runTurn({ agent, stream, model }: AgentUnderTest, style: TurnStyle): Promise<Turn> {
  const head: number = await stream.head();
  const served = model.served().length;
  const message = `say ${SPOKEN}`;
  const turn: Omit<Turn, "model" | "segments"> = {};
  const start = performance.now();
  if (style === "message") {
    const { offset } = await agent.message(message);
    expectSucceeded(await stream.waitForEvent({ type: RUN_SETTLED, afterOffset: offset, timeoutMs: TIMEOUT_MS }));
    turn.runSettled = performance.now() - start;
  } else {
    const settled = style === "both" ? stream.waitForEvent({ type: RUN_SETTLED, afterOffset: head, timeoutMs: TIMEOUT_MS }) : undefined;
    const reply = await agent.ask({ message, timeoutMs: TIMEOUT_MS });
    turn.ask = performance.now() - start;
    if (reply.text !== SPOKEN) throw new Error(`the agent said ${JSON.stringify(reply.text)}, expected ${JSON.stringify(SPOKEN)}`);
    if (settled) {
      expectSucceeded(await settled);
      turn.runSettled = performance.now() - start;
    } else {
      // Untimed: the next turn starts on an idle agent.
      expectSucceeded(await stream.waitForEvent({ type: RUN_SETTLED, afterOffset: reply.offset, timeoutMs: TIMEOUT_MS }));
    }
  }
  const requests = model.served().slice(served);
  if (requests.length !== 1) throw new Error(`a turn made ${requests.length} model requests, expected 1`);
  const modelMs = requests[0]?.ms ?? 0;
  if (turn.ask !== undefined) turn.ask -= modelMs;
  if (turn.runSettled !== undefined) turn.runSettled -= modelMs;
  return { ...turn, model: modelMs, segments: segmentsOf(await stream.getEvents({ afterOffset: head, limit: 50 })) };
}

function expectSucceeded(event: StreamEvent<string, { status?: string }>): void {
  if (event.payload.status !== "succeeded") throw new Error(`the script settled ${JSON.stringify(event.payload)}`);
}

function segmentsOf(events: StreamEvent[]): Segments {
  const at = (type: string, where: (payload: Record<string, unknown>) => boolean = () => true) => {
    const event = events.find((candidate) => candidate.type === type && where(candidate.payload as Record<string, unknown>));
    if (!event) throw new Error(`the turn has no ${type}: ${events.map((each) => each.type).join(", ")}`);
    return Date.parse(event.createdAt);
  };
  const message = at("events.iterate.com/agent/context-added", (payload) => payload.role === "user");
  const request = at("events.iterate.com/agent/llm-request-requested");
  const settled = at("events.iterate.com/agent/llm-request-settled");
  const sent = at("events.iterate.com/agent/message-sent");
  const runSettled = at(RUN_SETTLED);
  return {
    messageToRequest: request - message,
    requestToSettled: settled - request,
    settledToMessageSent: sent - settled,
    messageSentToRunSettled: runSettled - sent,
    settledToRunSettled: runSettled - settled,
    total: runSettled - message,
  };
}
