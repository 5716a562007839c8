import { describe, expect, test } from "vitest";
import type { StreamEvent } from "iterate/types";
import { errorCode } from "iterate/errors";
import { CheckedEventInputs, planAppend, type AppendContext } from "./append-plan.ts";
import { initialStreamCoreState, SUBSCRIPTION_CONFIGURED } from "./stream-core.ts";
import { CAPABILITY_DISCONNECTED, RUN_SETTLED } from "../capability-host/itx-contract.ts";

// The append plan is pure: these rows need no Durable Object, only a context to read.
function context(overrides: Partial<AppendContext> = {}): AppendContext {
  const stored = new Map<string, StreamEvent>();
  return {
    projectId: "prj_a",
    path: "/x",
    head: 4,
    core: initialStreamCoreState(),
    byIdempotencyKey: (key) => stored.get(key),
    hasBinding: (name) => name === "CAPABILITY_HOST",
    ...overrides,
  };
}

const person = { principal: "p", origin: "/" };

function refusal(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return errorCode(error);
  }
  return "planned";
}

describe("the append plan", () => {
  test("only a CheckedEventInputs made here skips validation; the same shape as data is checked like any input", () => {
    const bad = [{ type: "demo/a", payload: Number.POSITIVE_INFINITY }];
    expect(refusal(() => planAppend(context(), { events: { inputs: bad } as never, stamp: person }))).toBe("INVALID_ARGUMENT");
    expect(refusal(() => planAppend(context(), { events: bad, stamp: person }))).toBe("INVALID_ARGUMENT");
    // Made inside the Worker, it is trusted as proven (message-mapping.ts proves before it makes one).
    expect(planAppend(context(), { events: new CheckedEventInputs([{ type: "demo/a", payload: 1 }]), stamp: person })).toMatchObject({ kind: "commit", pending: [{ type: "demo/a", payload: 1 }] });
    // Write authority still applies to checked inputs.
    expect(refusal(() => planAppend(context(), { events: new CheckedEventInputs([{ type: "events.iterate.com/itx/capability-provided", payload: {} }]), stamp: person }))).toBe("PERMISSION_DENIED");
    expect(() => new CheckedEventInputs([])).toThrow("checked inputs hold 1 to 500 events");
  });

  test("ordinary events become pending rows stamped by the platform; a writer's source values are dropped", () => {
    const plan = planAppend(context(), { events: [{ type: "demo/a", source: { origin: "/forged", processor: "agent" } }, { type: "demo/b" }], stamp: person });
    expect(plan).toMatchObject({ kind: "commit", answers: [0, 1], pending: [{ type: "demo/a", source: person }, { type: "demo/b", source: person }] });
  });

  test.each([
    ["a platform type from an ordinary writer", { events: [{ type: "events.iterate.com/itx/capability-provided", payload: { path: ["a"], kind: "live" } }], stamp: person }, "PERMISSION_DENIED"],
    ["a platform idempotency key", { events: [{ type: "demo/a", idempotencyKey: "agent/created" }], stamp: person }, "PERMISSION_DENIED"],
    ["a stale expected head", { events: [{ type: "demo/a" }], expectedOffset: 3, stamp: person }, "OFFSET_CONFLICT"],
    ["a reaction declared by a writer", { events: [{ type: "demo/a", source: { reaction: { began: "/x#1", round: 1 } } }], stamp: person }, "INVALID_ARGUMENT"],
    [
      "a subscription naming another project's host",
      {
        events: [{ type: SUBSCRIPTION_CONFIGURED, payload: { key: "core", subscription: { type: "processor", binding: "CAPABILITY_HOST", host: "prj_b:/", processor: "core" } } }],
        stamp: { ...person, platform: "context" },
      },
      "INVALID_ARGUMENT",
    ],
  ])("refuses %s", (_name, request, code) => {
    expect(refusal(() => planAppend(context(), request))).toBe(code);
  });

  test("a bare jail refuses ordinary writers but not the platform; granting append opens it", () => {
    const jailed = context({ core: { subscriptions: {}, jailed: true } });
    expect(refusal(() => planAppend(jailed, { events: [{ type: "demo/in" }], stamp: person }))).toBe("PERMISSION_DENIED");
    expect(planAppend(jailed, { events: [{ type: "demo/in" }], stamp: { ...person, platform: "run" } }).kind).toBe("commit");
    const granted = context({ core: { subscriptions: {}, jailed: true, appendGranted: true } });
    expect(planAppend(granted, { events: [{ type: "demo/in" }], stamp: person }).kind).toBe("commit");
  });

  test("a run's settle past the last round is still written: refused, its run would stay open for good", () => {
    const host = { platform: "processor-host:core" };
    const past = { began: "/x#1", round: 6 };
    const settle = { type: RUN_SETTLED, payload: { requestOffset: 3, status: "succeeded" }, source: { reaction: past } };
    expect(planAppend(context(), { events: [settle], stamp: host })).toMatchObject({ kind: "commit", pending: [{ type: RUN_SETTLED, source: { reaction: past } }] });
    // Anything else the same host writes past the last round is the chain's stop.
    const other = { type: CAPABILITY_DISCONNECTED, payload: { path: ["a"], providedAtOffset: 2 }, source: { reaction: past } };
    expect(planAppend(context(), { events: [other], stamp: host })).toEqual({ kind: "runaway", reaction: past });
  });

  test("a write past the last round of its chain is planned as a runaway, before anything else is checked", () => {
    const plan = planAppend(context(), { events: [{ type: "demo/a", idempotencyKey: "k" }], stamp: { ...person, reaction: { began: "/x#1", round: 6 } } });
    expect(plan).toEqual({ kind: "runaway", reaction: { began: "/x#1", round: 6 } });
  });

  test("a processor host keeps its label, as its own slug; an ephemeral event carries the head", () => {
    const plan = planAppend(context(), { events: [{ type: "demo/frame", ephemeral: true, source: { processor: "other" } }], stamp: { platform: "processor-host:tally" } });
    if (plan.kind !== "commit") throw new Error("expected a commit");
    expect(plan.pending).toEqual([]);
    expect(plan.ephemeralAt[0]?.event).toMatchObject({ offset: 4, ephemeral: true, source: { platform: "processor-host:tally", processor: "tally" } });
  });

  test("an idempotent repeat answers the stored event; the same key twice in one call lands once", () => {
    const stored: StreamEvent = { streamPath: "/x", offset: 2, type: "demo/a", payload: { n: 1 }, createdAt: "t", source: person, idempotencyKey: "k" };
    const plan = planAppend(context({ byIdempotencyKey: (key) => (key === "k" ? stored : undefined) }), {
      events: [{ type: "demo/a", payload: { n: 1 }, idempotencyKey: "k" }, { type: "demo/b", idempotencyKey: "j" }, { type: "demo/b", idempotencyKey: "j" }],
      stamp: person,
    });
    expect(plan).toMatchObject({ kind: "commit", answers: [stored, 0, 0] });
    expect(refusal(() => planAppend(context({ byIdempotencyKey: () => stored }), { events: [{ type: "demo/a", payload: { n: 2 }, idempotencyKey: "k" }], stamp: person }))).toBe("IDEMPOTENCY_CONFLICT");
  });

  test("the jail row and the append grant change the stream's own state; other capability rows do not", () => {
    const host = { ...person, platform: "capability-host" };
    const jail = planAppend(context(), { events: [{ type: "events.iterate.com/itx/capability-provided", payload: { path: [], kind: "null" } }], stamp: host });
    expect(jail.kind === "commit" && jail.core).toMatchObject({ jailed: true });
    const core = initialStreamCoreState();
    const other = planAppend(context({ core }), { events: [{ type: "events.iterate.com/itx/capability-provided", payload: { path: ["a"], kind: "live" } }], stamp: host });
    expect(other.kind === "commit" && other.core).toBe(core);
  });
});
