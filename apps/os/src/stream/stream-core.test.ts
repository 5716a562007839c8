import { describe, expect, test } from "vitest";
import { reduceProcessor } from "iterate/stream/test-support";
import { SUBSCRIPTION_CONFIGURED, StreamCore, currentHostBinding, isProcessorHostBinding, parseSubscriptionConfigured } from "./stream-core.ts";

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
    const payload = row("a", "prj_a:/h1").payload;
    expect(parseSubscriptionConfigured(payload, () => true, "prj_a")).toEqual(payload);
    expect(() => parseSubscriptionConfigured(payload, () => false, "prj_a")).toThrow(/no processor host binding A_PROCESSORS/);
  });

  test.each([
    ["another project's host", "prj_b:/"],
    ["a project whose id starts the same", "prj_ab:/"],
    ["the deployment's streams", "__null__:/"],
    ["no path at all", "prj_a:"],
    ["a bare name", "h1"],
  ])("append-time parsing refuses %s", (_name, host) => {
    expect(() => parseSubscriptionConfigured(row("a", host).payload, () => true, "prj_a")).toThrow(/must name a host in this stream's project/);
  });
});

describe("processor host bindings", () => {
  const namespace = { getByName: () => ({}) };
  const env = { PROCESSOR_HOST_BINDINGS: "CAPABILITY_HOST, AGENT", CAPABILITY_HOST: namespace, AGENT: namespace, STREAM: namespace };

  test("only a listed binding that is a Durable Object namespace may host processors", () => {
    expect(isProcessorHostBinding(env, "CAPABILITY_HOST")).toBe(true);
    expect(isProcessorHostBinding(env, "STREAM")).toBe(false);
    expect(isProcessorHostBinding(env, "PROJECT")).toBe(false);
  });

  test("rows written before the rename wake the host under its current name", () => {
    expect(currentHostBinding("CAPABILITY_HOST_PROCESSORS")).toBe("CAPABILITY_HOST");
    expect(currentHostBinding("AGENT_PROCESSORS")).toBe("AGENT");
    expect(currentHostBinding("PROJECT_PROCESSORS")).toBe("PROJECT");
    expect(currentHostBinding("CAPABILITY_HOST")).toBe("CAPABILITY_HOST");
    expect(currentHostBinding("toString")).toBe("toString");
    expect(isProcessorHostBinding(env, currentHostBinding("AGENT_PROCESSORS"))).toBe(true);
  });
});
