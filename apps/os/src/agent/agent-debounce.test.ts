import { describe, expect, test } from "vitest";
import { reduceProcessor } from "iterate/stream/test-support";
import { LIMITS } from "../limits.ts";
import { AGENT_CREATED, CONTEXT_ADDED } from "./agent-events.ts";
import { AgentProcessor, debounceRemaining } from "./agent-processor.ts";

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
    const createdAt = "2026-11-30T12:00:00.123Z";
    const events = [
      { type: AGENT_CREATED, payload: { systemPrompt: "p", llm: { provider: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1", model: "m" } }, source: { principal: "t", origin: "/", platform: "agents" } },
      { type: CONTEXT_ADDED, payload: { role: "user", content: "hi" }, source: { principal: "t", origin: "/" } },
    ].map((event, index) => ({ ...event, offset: index + 1, streamPath: "/agents/a", createdAt }));
    expect(reduceProcessor(new AgentProcessor(), events).pending).toMatchObject({ offset: 2, autonomous: false, at: Date.parse(createdAt) });
  });
});
