import { describe, expect, test } from "vitest";
import { ProcessorEngine } from "iterate/stream/processor";
import { connectEngine, memoryStorage, memoryStream, reduceProcessor, settle } from "iterate/stream/test-support";
import { ItxError } from "iterate/errors";
import { LIMITS } from "../limits.ts";
import { AGENT_CREATED, CONTEXT_ADDED, LLM_REQUEST_REQUESTED } from "./agent-events.ts";
import { AgentProcessor, debounceRemaining, type AgentEffects } from "./agent-processor.ts";
import type { AgentState } from "./agent-contract.ts";

const created = {
  type: AGENT_CREATED,
  payload: { systemPrompt: "p", llm: { provider: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1", model: "m" } },
  source: { principal: "t", origin: "/", platform: "agents" },
};
const said = (content: string) => ({ type: CONTEXT_ADDED, payload: { role: "user", content }, source: { principal: "t", origin: "/" } });

// Created, then two inputs, the second `gapMs` after the first on the stream's clock.
function twoInputs(gapMs: number) {
  return [created, said("one"), said("two")].map((event, index) => ({
    ...event,
    offset: index + 1,
    streamPath: "/agents/a",
    createdAt: new Date(Date.UTC(2026, 10, 30, 12) + (index === 2 ? gapMs : 0)).toISOString(),
  }));
}

describe("the agent's debounce", () => {
  test("counts from the input's append: what its delivery took is not waited again", () => {
    const at = 1_000_000;
    expect(debounceRemaining(at, at)).toBe(LIMITS.DEBOUNCE_MS);
    expect(debounceRemaining(at, at + 3)).toBe(LIMITS.DEBOUNCE_MS - 3);
    expect(debounceRemaining(at, at + LIMITS.DEBOUNCE_MS + 50)).toBe(0);
    // A clock reading earlier than the stream's never stretches the window; an unknown time waits it whole.
    expect(debounceRemaining(at, at - 500)).toBe(LIMITS.DEBOUNCE_MS);
    expect(debounceRemaining(undefined, at)).toBe(LIMITS.DEBOUNCE_MS);
  });

  test("pending input keeps the time it was appended, from the stream's clock", () => {
    const events = twoInputs(2).slice(0, 2);
    expect(reduceProcessor(new AgentProcessor(), events).pending).toMatchObject({ offset: 2, autonomous: false, at: Date.UTC(2026, 10, 30, 12) });
  });
});

// An agent on a memory stream whose clock the test sets. The model is unreachable, so every
// turn settles failed at once; what the test reads is how long each turn waited to ask.
function agentOnMemoryStream() {
  let clock = Date.now();
  const stream = memoryStream({ path: "/agents/a", now: () => clock });
  const sleeps: number[] = [];
  const sleeping: Array<() => void> = [];
  // The request offsets the model was asked for, once per ask.
  const asked: number[] = [];
  let awake = false;
  // While set, appends wait for it: a turn caught between reading its state and writing.
  let held: PromiseWithResolvers<void> | undefined;
  const effects: AgentEffects = {
    // As the agent's host does: what it appends is folded at once, before the append answers.
    append: async (_reaction, ...events) => {
      await held?.promise;
      const written = await stream.append(...events);
      await engine.deliver(written);
      return written;
    },
    complete: async ({ requestOffset }) => {
      asked.push(requestOffset);
      throw new ItxError("UNAVAILABLE", "no model in this test");
    },
    readEvents: async (after, before) => stream.events.filter((event) => event.offset > after && event.offset < before),
    // A sleep lasts until the test wakes it; once the agent is awake, none waits.
    sleep: (ms) => {
      sleeps.push(ms);
      return awake ? Promise.resolve() : new Promise<void>((resolve) => sleeping.push(resolve));
    },
  };
  const engine = new ProcessorEngine({ stream, storage: memoryStorage(), processors: [new AgentProcessor(effects)] });
  connectEngine(stream, engine);
  return {
    stream,
    engine,
    sleeps,
    asked,
    hold: () => (held = Promise.withResolvers<void>()),
    release: () => held?.resolve(),
    wakeFirst: () => sleeping.shift()?.(),
    wake: () => {
      awake = true;
      for (const resolve of sleeping.splice(0)) resolve();
    },
    setClock: (at: number) => (clock = at),
    requests: () => stream.events.filter((event) => event.type === LLM_REQUEST_REQUESTED).map((event) => (event.payload as { afterOffset: number }).afterOffset),
    state: async () => (await engine.snapshot("agent")).state as AgentState,
  };
}

/** A started agent whose first input waits out its whole window (the stream's clock runs a minute ahead). */
async function agentWithOneInputWaiting() {
  const agent = agentOnMemoryStream();
  await agent.engine.start();
  await agent.stream.append(created);
  agent.setClock(Date.now() + 60_000);
  await agent.stream.append(said("one"));
  await expect.poll(() => agent.sleeps.length).toBe(1);
  return agent;
}

describe("when a turn asks the model", () => {
  test("a burst is one turn: input that lands while the first waits is answered by the same request", async () => {
    // What is left of each input's window is all of it.
    const agent = await agentWithOneInputWaiting();
    await agent.stream.append(said("two"));
    await expect.poll(() => agent.sleeps.length).toBe(2);
    await agent.stream.append(said("three"));
    await expect.poll(() => agent.sleeps.length).toBe(3);
    // Three turns began, each waits the whole window, and nothing was asked yet. They wake
    // together: the first asks for all three, the others find its request and stop.
    expect(agent.sleeps).toEqual([LIMITS.DEBOUNCE_MS, LIMITS.DEBOUNCE_MS, LIMITS.DEBOUNCE_MS]);
    expect(agent.requests()).toEqual([]);
    agent.wake();
    await settle(agent.engine);
    const inputs = agent.stream.events.filter((event) => event.type === CONTEXT_ADDED).map((event) => event.offset);
    expect(agent.requests()).toEqual([inputs.at(-1)]);
    expect((await agent.state()).pending).toBeNull();
    // The turn that appended the request asked the model for it, once; no other pass did.
    const request = agent.stream.events.find((event) => event.type === LLM_REQUEST_REQUESTED);
    expect(agent.asked).toEqual([request?.offset]);
  });

  test("turns that wake apart ask once: a later one waits for the earlier one's request and finds it", async () => {
    const agent = await agentWithOneInputWaiting();
    // The first turn wakes and reads its state (only "one" pending), then its append is held up.
    agent.hold();
    agent.wakeFirst();
    await agent.engine.chainsIdle();
    await agent.stream.append(said("two"));
    await expect.poll(() => agent.sleeps.length).toBe(2);
    // The second turn wakes with "two" pending and no request folded yet.
    agent.wake();
    await new Promise((resolve) => setTimeout(resolve, 20));
    agent.release();
    await settle(agent.engine);
    expect(agent.requests()).toEqual([2]);
    expect((await agent.state()).pending).toBeNull();
    expect(agent.asked).toHaveLength(1);
  });

  test("a request folded with no turn answering it (its turn's host died) is asked for by the pass that finds it", async () => {
    const agent = agentOnMemoryStream();
    await agent.engine.start();
    await agent.stream.append(created);
    // What a dead host left: the input and its request on the stream, nothing answered.
    await agent.stream.append(said("one"));
    const [request] = await agent.stream.append({ type: LLM_REQUEST_REQUESTED, payload: { afterOffset: 2 }, idempotencyKey: "agent/llm-request-requested:2", source: { processor: "agent" } });
    agent.wake();
    await settle(agent.engine);
    expect(agent.asked).toEqual([request?.offset]);
    expect((await agent.state()).request).toBeNull();
  });
});
