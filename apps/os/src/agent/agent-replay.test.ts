import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { reduceProcessor } from "iterate/stream/test-support";
import { LIMITS } from "../limits.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { SUBSCRIPTION_CONFIGURED } from "../stream/stream-core.ts";
import { RUN_REQUESTED, RUN_SETTLED } from "../capability-host/itx-contract.ts";
import { AGENT_CREATED, CONTEXT_ADDED, LLM_REQUEST_REQUESTED, LLM_REQUEST_SETTLED, MESSAGE_SENT } from "./agent-events.ts";
import { AgentProcessor } from "./agent-processor.ts";

const person = { principal: "tester", origin: "/" };
const agent = { principal: "tester", origin: "/agents/replay", platform: "agent" };
const self = { processor: "agent" };
/** The agent surface (`itx.agents`) writes creation and the agent's chat. */
const surface = { principal: "tester", origin: "/", platform: "agents" };

// A finished two-turn conversation, written as the live processor would have written it.
function conversation(requestAt: (turn: number) => number) {
  return [
    { stamp: surface, events: [{ type: AGENT_CREATED, payload: { systemPrompt: "You count apples.", llm: { provider: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1", model: "m" } } }] },
    { stamp: person, events: [{ type: CONTEXT_ADDED, payload: { role: "user", content: "How many apples?" } }] },
    { stamp: agent, events: [{ type: LLM_REQUEST_REQUESTED, payload: { afterOffset: 2 }, source: self }] },
    {
      stamp: agent,
      events: [
        { type: CONTEXT_ADDED, payload: { role: "assistant", content: "```ts\nasync (itx) => 42\n```", requestOffset: requestAt(0) }, source: self },
        { type: RUN_REQUESTED, payload: { script: "async (itx) => 42", enqueued: true }, source: self },
        { type: LLM_REQUEST_SETTLED, payload: { requestOffset: requestAt(0), status: "succeeded" }, source: self },
      ],
    },
  ];
}

describe("agent processor replay", () => {
  test("a new agent host replaying an existing stream reaches the same state, with no side effects", async () => {
    const coordinate = `prj_replay${Date.now()}:/agents/replay`;
    const stream = streamStub(env.STREAM, coordinate);
    for (const { stamp, events } of conversation(() => 3)) await stream.append({ events, stamp });
    // The script's outcome and the second turn, which ended the loop (no result key).
    await stream.append({ events: [{ type: RUN_SETTLED, payload: { requestOffset: 5, status: "succeeded", result: 42 } }], stamp: { platform: "capability-host" } });
    await stream.append({ events: [{ type: LLM_REQUEST_REQUESTED, payload: { afterOffset: 7 }, source: self }], stamp: agent });
    await stream.append({
      events: [
        { type: CONTEXT_ADDED, payload: { role: "assistant", content: "```ts\nasync (itx) => { await itx.chat.sendMessage('42 apples') }\n```", requestOffset: 8 }, source: self },
        { type: RUN_REQUESTED, payload: { script: "async (itx) => { await itx.chat.sendMessage('42 apples') }", enqueued: true }, source: self },
        { type: LLM_REQUEST_SETTLED, payload: { requestOffset: 8, status: "succeeded" }, source: self },
      ],
      stamp: agent,
    });
    await stream.append({ events: [{ type: MESSAGE_SENT, payload: { text: "42 apples" } }], stamp: { ...surface, origin: "/agents/replay" } });
    await stream.append({ events: [{ type: RUN_SETTLED, payload: { requestOffset: 10, status: "succeeded" } }], stamp: { platform: "capability-host" } });
    const history = await stream.getEvents({ limit: 500 });

    // Only now is the agent processor subscribed: its host replays the whole history.
    await stream.append({
      events: [{ type: SUBSCRIPTION_CONFIGURED, payload: { key: "agent", subscription: { type: "processor", binding: "AGENT", host: coordinate, processor: "agent" } } }],
      stamp: surface,
    });
    const head = await stream.head();
    const host = env.AGENT.getByName(coordinate);
    await expect.poll(async () => (await host.state()).offset, { timeout: 5_000 }).toBe(head);
    const replayed = (await host.state()).state;
    const folded = reduceProcessor(new AgentProcessor(), history);
    expect(replayed).toEqual(folded);
    expect(replayed).toMatchObject({
      turns: 2,
      messagesSent: 1,
      request: null,
      run: null,
      pending: null,
      history: [
        { role: "user", content: "How many apples?" },
        { role: "assistant" },
        { role: "developer", content: "[script returned] 42" },
        { role: "assistant" },
      ],
    });
    // Replaying history is folding, not acting: nothing was asked of the model, nothing appended.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await stream.head()).toBe(head);
  });

  test("a request is rebuilt from the events up to its offset, even after the system lane changed", async () => {
    const processor = new AgentProcessor();
    const events = conversation(() => 3).flatMap(({ stamp, events: batch }) =>
      batch.map((event) => ({ ...event, source: { ...stamp, ...("source" in event ? event.source : {}) } })),
    );
    const all = [...events, { type: "events.iterate.com/agent/configured", payload: { systemPrompt: "Changed later." }, source: person }];
    const committed = all.map((event, index) => ({ ...event, offset: index + 1, streamPath: "/agents/replay", createdAt: "" }));
    const effects = {
      append: async () => [],
      complete: async () => ({ text: "" }),
      readEvents: async (after: number, before: number) => committed.filter((event) => event.offset > after && event.offset < before),
      sleep: async () => undefined,
    };
    const atRequest = await processor.stateAt(effects, 3);
    expect(atRequest.system.systemPrompt).toBe("You count apples.");
    expect(atRequest.history.map((item) => item.content)).toEqual(["How many apples?"]);
    expect(reduceProcessor(processor, committed).system.systemPrompt).toBe("Changed later.");
  });
});

describe("history compaction by bytes", () => {
  test("a conversation of long items compacts to HISTORY_MAX_BYTES, so its host's checkpoint is always written", async () => {
    const coordinate = `prj_long${Date.now()}:/agents/long`;
    const stream = streamStub(env.STREAM, coordinate);
    await stream.append({ events: [{ type: AGENT_CREATED, payload: { systemPrompt: "You listen.", llm: { provider: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1", model: "m" } } }], stamp: surface });
    // 24 items of 60,000 two-byte characters: 2.9 MB of history, far past the 1 MiB checkpoint bound.
    for (let i = 0; i < 24; i++) {
      await stream.append({ events: [{ type: CONTEXT_ADDED, payload: { role: "user", content: `${i} ${"é".repeat(60_000)}` } }], stamp: person });
    }
    const last = await stream.head();
    const folded = reduceProcessor(new AgentProcessor(), await stream.getEvents({ limit: 500 }));
    const bytes = new TextEncoder().encode(JSON.stringify(folded.history)).byteLength;
    expect(bytes).toBeLessThanOrEqual(LIMITS.HISTORY_MAX_BYTES);
    expect(folded.history.length).toBeGreaterThan(1);
    expect(folded.history.at(-1)?.content.startsWith("23 ")).toBe(true);
    expect(folded.historyBytes).toBe(folded.history.reduce((sum, item) => sum + new TextEncoder().encode(JSON.stringify(item)).byteLength, 0));
    expect(folded.compactedAt).toBeGreaterThan(0);
    // The host replays it all and checkpoints past the last item (before the bound by bytes, its
    // checkpoint was LIMIT_EXCEEDED at every batch and the host never got there).
    await stream.append({
      events: [{ type: SUBSCRIPTION_CONFIGURED, payload: { key: "agent", subscription: { type: "processor", binding: "AGENT", host: coordinate, processor: "agent" } } }],
      stamp: surface,
    });
    const host = env.AGENT.getByName(coordinate);
    await expect.poll(async () => (await host.state()).offset, { timeout: 10_000 }).toBeGreaterThan(last);
    expect((await host.state()).state.history).toEqual(folded.history);
  }, 60_000);
});
