import { describe, expect, test } from "vitest";
import { reduceProcessor } from "iterate/stream/test-support";
import { SUBSCRIPTION_CONFIGURED, StreamCore, parseSubscriptionConfigured } from "./stream-core.ts";

const row = (key: string, host: string | null) => ({
  type: SUBSCRIPTION_CONFIGURED,
  payload: { key, subscription: host === null ? null : { type: "processor", binding: "A_PROCESSORS", host, processor: "tally" } },
});

describe("the stream's core contract", () => {
  test.each([
    ["no rows", [], {}],
    ["a row is set", [row("a", "h1")], { a: { type: "processor", binding: "A_PROCESSORS", host: "h1", processor: "tally" } }],
    ["a later row replaces it", [row("a", "h1"), row("a", "h2")], { a: { type: "processor", binding: "A_PROCESSORS", host: "h2", processor: "tally" } }],
    ["null clears it", [row("a", "h1"), row("a", null)], {}],
    ["a malformed row is skipped", [row("a", "h1"), { type: SUBSCRIPTION_CONFIGURED, payload: { key: "b" } }], { a: { type: "processor", binding: "A_PROCESSORS", host: "h1", processor: "tally" } }],
    ["foreign events are ignored", [{ type: "demo/ping" }], {}],
  ])("%s", (_name, events, subscriptions) => {
    expect(reduceProcessor(new StreamCore(), events)).toEqual({ subscriptions });
  });

  test("append-time parsing needs a real binding", () => {
    const payload = row("a", "h1").payload;
    expect(parseSubscriptionConfigured(payload, () => true)).toEqual(payload);
    expect(() => parseSubscriptionConfigured(payload, () => false)).toThrow(/no processor host binding A_PROCESSORS/);
  });
});
