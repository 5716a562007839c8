import { describe, expect, test } from "vitest";
import { committedEvents, reduceProcessor } from "iterate/stream/test-support";
import { ItxCore, RUN_REQUESTED, RUN_SETTLED, confinementOfState } from "../capability-host/itx-contract.ts";
import {
  CAPABILITY_PROVIDED,
  CAPABILITY_REVOKED,
  SUBSCRIPTION_CONFIGURED,
  StreamCore,
  currentHostBinding,
  initialStreamCoreState,
  isProcessorHostBinding,
  openRunBytes,
  opensToWriters,
  parseSubscriptionConfigured,
  reduceStreamCore,
} from "./stream-core.ts";

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

const revoke = (path: string[], providedAtOffset?: number) => ({ type: CAPABILITY_REVOKED, payload: { path, ...(providedAtOffset === undefined ? {} : { providedAtOffset }) } });

// The capability host's answer (ItxCore's fold) and the Stream's, which refuses writers, must agree.
function verdicts(events: Array<{ type: string; payload: unknown }>) {
  const host = confinementOfState(reduceProcessor(new ItxCore(), events), "/j");
  const hostOpen = host === undefined || host.grants.includes("append");
  // The Stream Durable Object folds its core directly (restoreCore, append-plan), not through the engine.
  const stream = committedEvents(events).reduce(reduceStreamCore, initialStreamCoreState());
  return { host: hostOpen, stream: opensToWriters(stream) };
}

describe("the jail, as the Stream folds it", () => {
  const jailRow = { type: CAPABILITY_PROVIDED, payload: { path: [], kind: "null" } };
  const grant = { type: CAPABILITY_PROVIDED, payload: { path: ["append"], kind: "built-in" } };

  test.each([
    ["a jail", [jailRow], false],
    ["a jail granting append", [jailRow, grant], true],
    ["a jail lifted", [jailRow, revoke([], 1)], true],
    ["a jail lifted without naming its row", [jailRow, revoke([])], true],
    ["a row at [] that is not the null row", [jailRow, { type: CAPABILITY_PROVIDED, payload: { path: [], kind: "built-in" } }], false],
    ["a revoke naming an older null row, after the jail was set again", [jailRow, revoke([], 1), jailRow, revoke([], 1)], false],
    ["a revoke with a field the schema does not know", [jailRow, { type: CAPABILITY_REVOKED, payload: { path: [], providedAtOffset: 1, extra: true } }], false],
    ["a revoke whose path is not strings", [jailRow, { type: CAPABILITY_REVOKED, payload: { path: [1] } }], false],
    ["a grant revoked by another row's offset", [jailRow, grant, revoke(["append"], 1)], true],
    ["a grant revoked", [jailRow, grant, revoke(["append"], 2)], false],
    ["a grant provided with a malformed field", [jailRow, { type: CAPABILITY_PROVIDED, payload: { path: ["append"], kind: "built-in", instructions: 5 } }], false],
  ])("%s: the Stream and the capability host agree", (_name, events, open) => {
    expect(verdicts(events)).toEqual({ host: open, stream: open });
  });
});

const requested = (payload: Record<string, unknown>) => ({ type: RUN_REQUESTED, payload });
const utf8 = (text: string) => new TextEncoder().encode(text).byteLength;
const settled = (requestOffset: number) => ({ type: RUN_SETTLED, payload: { requestOffset, status: "succeeded" } });

describe("open enqueued runs, as the Stream folds them", () => {

  test.each([
    ["enqueued runs", [requested({ script: "a", enqueued: true }), requested({ script: "b", enqueued: true })]],
    ["a run settled", [requested({ script: "a", enqueued: true }), requested({ script: "b", enqueued: true }), settled(1)]],
    ["inline runs (no enqueued), beside an enqueued one", [requested({ script: "a" }), requested({ script: "b", enqueued: false }), requested({ script: "c", enqueued: true })]],
    ["a settle naming no open run", [requested({ script: "a", enqueued: true }), settled(7), settled(1), settled(1)]],
    ["requests the host's schema refuses, beside one it takes", [requested({ script: "", enqueued: true }), requested({ script: "a", enqueued: true, extra: 1 }), requested({ script: "b", enqueued: true })]],
  ])("%s: the Stream counts the runs the capability host holds open", (_name, events) => {
    const host = reduceProcessor(new ItxCore(), events).runs;
    const stream = committedEvents(events).reduce(reduceStreamCore, initialStreamCoreState());
    // Every case leaves some run open or had one settle: the comparison is never of two empty folds.
    expect(events.some((event) => (event.payload as { enqueued?: boolean }).enqueued === true)).toBe(true);
    expect(Object.keys(stream.openRuns ?? {}).toSorted()).toEqual(Object.keys(host).toSorted());
    const bytes = Object.entries(host).reduce((sum, [key, run]) => sum + utf8(key) + utf8(JSON.stringify(run)) + 4, 0);
    expect(openRunBytes(stream)).toBe(bytes);
  });
});
