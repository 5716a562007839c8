import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import type { StreamEvent } from "iterate/types";
import { CONTEXT_ADDED, MESSAGE_SENT } from "../agent/agent-events.ts";
import { CAPABILITY_PROVIDED, RUN_REQUESTED, RUN_SETTLED } from "../capability-host/itx-contract.ts";
import { CAPABILITY_HOST_BINDING, ensureContext } from "../itx/context-lifecycle.ts";
import { CONFIG_COMMIT_COPIED, PROJECT_HEARTBEAT_TRIGGERED } from "../project/project-events.ts";
import { PROJECT_HOST_BINDING } from "../project/project-lifecycle.ts";
import { STREAM_WOKEN } from "./stream-woken.ts";
import { hostStub } from "../capability-host/host-stub.ts";
import { LIMITS } from "../limits.ts";
import { deliveryDue } from "./delivery-due.ts";
import { streamStub } from "./stream-rpc-target.ts";
import { SUBSCRIPTION_CONFIGURED } from "./stream-core.ts";

const core = { type: "processor" as const, binding: CAPABILITY_HOST_BINDING, host: "prj_x:/", processor: "core" };
const agent = { type: "processor" as const, binding: "AGENT", host: "prj_x:/agents/a", processor: "agent" };
const project = { type: "processor" as const, binding: PROJECT_HOST_BINDING, host: "prj_x:/", processor: "project" };
const tallies = { type: "processor" as const, binding: "TEST_PROCESSORS", host: "prj_x:/tallies", processor: "tally" };
const written = (...types: string[]) => types.map((type, index) => ({ type, offset: index + 1 }) as StreamEvent);

describe("deliveryDue", () => {
  test("a capability host is due a commit only when it holds a type the host folds", () => {
    expect(deliveryDue("core", core, written("demo/ping", "events.iterate.com/agent/context-added"))).toBe(false);
    expect(deliveryDue("core", core, written("demo/ping", RUN_REQUESTED))).toBe(true);
    expect(deliveryDue("core", core, written(CAPABILITY_PROVIDED))).toBe(true);
  });

  test("a script's run facts are due to a capability host only when they open or close an enqueued run", () => {
    // An inline run's request and settle leave the host's state as it was: they wait.
    expect(deliveryDue("core", core, written(RUN_REQUESTED), { runsMoved: false })).toBe(false);
    expect(deliveryDue("core", core, written(RUN_SETTLED), { runsMoved: false })).toBe(false);
    expect(deliveryDue("core", core, written(RUN_SETTLED, CAPABILITY_PROVIDED), { runsMoved: false })).toBe(true);
    // An enqueued run the host must start, or its end; unknown counts as moved.
    expect(deliveryDue("core", core, written(RUN_REQUESTED), { runsMoved: true })).toBe(true);
    expect(deliveryDue("core", core, written(RUN_SETTLED), { runsMoved: true })).toBe(true);
    expect(deliveryDue("core", core, written(RUN_SETTLED))).toBe(true);
  });

  test("the Project processor is due only what it folds; a root stream's other traffic waits", () => {
    expect(deliveryDue("project", project, written("demo/ping", RUN_REQUESTED, CAPABILITY_PROVIDED))).toBe(false);
    expect(deliveryDue("project", project, written("demo/ping", PROJECT_HEARTBEAT_TRIGGERED))).toBe(true);
    expect(deliveryDue("project", project, written(CONFIG_COMMIT_COPIED))).toBe(true);
    expect(deliveryDue("project", project, written(STREAM_WOKEN))).toBe(true);
  });

  test("an agent is due everything it folds but the messages its scripts send, which go with what comes next", () => {
    expect(deliveryDue("agent", agent, written(MESSAGE_SENT))).toBe(false);
    expect(deliveryDue("agent", agent, written(MESSAGE_SENT, RUN_SETTLED))).toBe(true);
    expect(deliveryDue("agent", agent, written(CONTEXT_ADDED))).toBe(true);
    expect(deliveryDue("agent", agent, written("demo/ping"))).toBe(false);
  });

  test("any other processor is due every commit, except the one whose host wrote it and folds it itself", () => {
    expect(deliveryDue("tally", tallies, written("demo/ping"))).toBe(true);
    expect(deliveryDue("tally", tallies, written("demo/ping"), { foldedBy: "tally" })).toBe(false);
    expect(deliveryDue("agent", agent, written(CONTEXT_ADDED), { foldedBy: "agent" })).toBe(false);
    expect(deliveryDue("core", core, written(RUN_REQUESTED), { foldedBy: "agent" })).toBe(true);
  });
});

let counter = 0;
const caller = { principal: "tester", origin: "/" };

/** A fresh project's root context with one mount, its capability host caught up; `cursor` is that host's. */
async function rootWithMount(prefix: string) {
  counter += 1;
  const projectId = `${prefix}${Date.now()}${counter}`;
  await ensureContext(env, { projectId, path: "/", name: "test", parent: null, ancestors: [], caller });
  const stream = streamStub(env.STREAM, `${projectId}:/`);
  const cursor = async () => (await stream.info()).processors.find((delivery) => delivery.key === "core")?.cursor ?? 0;
  await hostStub(env, projectId, "/").provide({ path: ["a"], capability: () => 1, caller: { ...caller, connectionId: "c" } });
  await expect.poll(cursor).toBe(await stream.head());
  return { projectId, stream, cursor };
}

describe("a delivery that is not due", () => {
  test("goes out with the next commit due to it, in order, or within DELIVERY_HOLD_MS", async () => {
    const { projectId, stream, cursor } = await rootWithMount("prj_due");
    // Types the capability host does not fold wait...
    const [ping] = await stream.append({ events: [{ type: "demo/ping" }, { type: "demo/pong" }], stamp: caller });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await cursor()).toBe((ping?.offset ?? 0) - 1);
    // ...for the next commit it folds, which sends them with it.
    await hostStub(env, projectId, "/").provide({ path: ["b"], capability: () => 2, caller: { ...caller, connectionId: "c" } });
    await expect.poll(cursor).toBe(await stream.head());
    // Or for the backstop, when none comes.
    const started = Date.now();
    await stream.append({ events: [{ type: "demo/ping" }], stamp: caller });
    await expect.poll(cursor, { timeout: LIMITS.DELIVERY_HOLD_MS + 2_000, interval: 50 }).toBe(await stream.head());
    expect(Date.now() - started).toBeGreaterThanOrEqual(LIMITS.DELIVERY_HOLD_MS - 50);
  });
});

describe("a script's run facts", () => {
  test("an inline run's wait for the capability host's next due commit; an enqueued run goes at once", async () => {
    const { stream, cursor } = await rootWithMount("prj_runs");
    const before = await stream.head();
    const [requested] = await stream.append({ events: [{ type: RUN_REQUESTED, payload: { script: "async () => 1" } }], stamp: caller });
    await stream.append({ events: [{ type: RUN_SETTLED, payload: { requestOffset: requested?.offset, status: "succeeded" } }], stamp: { ...caller, platform: "capability-host" } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await cursor()).toBe(before);
    const [enqueued] = await stream.append({ events: [{ type: RUN_REQUESTED, payload: { script: "async () => 2", enqueued: true } }], stamp: caller });
    await expect.poll(cursor, { timeout: LIMITS.DELIVERY_HOLD_MS / 2 }).toBeGreaterThanOrEqual(enqueued?.offset ?? Number.POSITIVE_INFINITY);
  });
});

const tally = (n: number) => ({ type: "test/tally-added", payload: { n } });

describe("an append its subscriber folds itself", () => {
  test("is not sent to that subscriber until a commit it did not write", async () => {
    counter += 1;
    const name = `prj_folded${Date.now()}${counter}:/tallies`;
    const stream = streamStub(env.STREAM, name);
    const subscription = { type: "processor", binding: "TEST_PROCESSORS", host: name, processor: "tally" };
    await stream.append({ events: [{ type: SUBSCRIPTION_CONFIGURED, payload: { key: "tally", subscription } }], stamp: { principal: "tester", platform: "context" } });
    const cursor = async () => (await stream.info()).processors[0]?.cursor;
    await stream.append({ events: [tally(1)], stamp: caller });
    await expect.poll(cursor, { timeout: 5_000 }).toBe(await stream.head());
    await stream.append({ events: [tally(2)], stamp: caller, foldedBy: "tally" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await cursor()).toBe((await stream.head()) - 1);
    await stream.append({ events: [tally(3)], stamp: caller });
    await expect.poll(cursor).toBe(await stream.head());
    // The host (which folded nothing itself here) got both with the second delivery, each once.
    const host = env.TEST_PROCESSORS.getByName(name) as unknown as { snapshot(): Promise<{ state: { count: number; offsets: number[] } }> };
    await expect.poll(async () => (await host.snapshot()).state.count).toBe(3);
    expect((await host.snapshot()).state.offsets).toEqual([2, 3, 4]);
  });
});
