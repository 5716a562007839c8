import { describe, expect, test } from "vitest";
import { ItxContract } from "../capability-host/itx-contract.ts";
import { AgentContract } from "../agent/agent-contract.ts";
import { SchedulerContract } from "../scheduler/scheduler-contract.ts";
import { StreamCoreContract } from "./stream-core.ts";
import { CONTROL_EVENTS, OPEN_EVENTS, mayWrite, writeRuleOf } from "./write-authority.ts";
import { LOOP_LIMIT_RECORDED } from "./reaction.ts";
import { AGENT_LISTED, LLM_RESPONSE_FRAME, MESSAGE_SENT } from "../agent/agent-events.ts";
import { PROJECT_CREATE_REQUESTED, PROJECT_CREATED } from "../project/project-lifecycle.ts";
import { PROJECT_ID_CLAIMED, PROJECT_SLUG_CLAIMED } from "../project/project-directory.ts";
import { SECRET_SET, SECRET_USED } from "../secret/secret-durable-object.ts";
import { ProjectContract } from "../project/project-contract.ts";
import { STREAM_WOKEN } from "./stream-woken.ts";

/**
 * Every contract the platform folds. A new domain's contract joins this list; the test below then
 * fails until each type it folds has a rule: a writer list, or a reason anyone may write it.
 */
const PLATFORM_CONTRACTS = [StreamCoreContract, ItxContract, AgentContract, SchedulerContract, ProjectContract];

/** Facts the platform writes and reads back by key or by type outside a contract's fold. */
const PLATFORM_FACTS = [LOOP_LIMIT_RECORDED, AGENT_LISTED, LLM_RESPONSE_FRAME, MESSAGE_SENT, PROJECT_CREATE_REQUESTED, PROJECT_CREATED, PROJECT_SLUG_CLAIMED, PROJECT_ID_CLAIMED, SECRET_SET, SECRET_USED, STREAM_WOKEN];

describe("who may write what", () => {
  test.each(PLATFORM_CONTRACTS.flatMap((contract) => contract.consumes.map((type) => [contract.slug, type] as const)))(
    "%s folds %s, which has exactly one rule",
    (_slug, type) => {
      const control = type in CONTROL_EVENTS;
      const open = type in OPEN_EVENTS;
      expect(control !== open, `${type} needs a row in CONTROL_EVENTS or OPEN_EVENTS (stream/write-authority.ts)`).toBe(true);
    },
  );

  test.each(PLATFORM_FACTS)("the platform's own fact %s is the platform's", (type) => {
    expect(CONTROL_EVENTS[type]?.writers.length ?? 0).toBeGreaterThan(0);
  });

  test("a type in a platform namespace without a row is the platform's; other types are anybody's", () => {
    expect(writeRuleOf("events.iterate.com/repo/later-fact-recorded")).toBeDefined();
    expect(mayWrite("events.iterate.com/repo/later-fact-recorded", { origin: "/" })).toBe(false);
    expect(mayWrite("events.iterate.com/repo/later-fact-recorded", { platform: "context" })).toBe(true);
    // A type with a row is its writers' alone.
    expect(mayWrite("events.iterate.com/repo/commit-completed", { platform: "repo" })).toBe(true);
    expect(mayWrite("events.iterate.com/repo/commit-completed", { platform: "context" })).toBe(false);
    expect(mayWrite("events.iterate.com/slack/webhook-received", { origin: "/" })).toBe(true);
    expect(mayWrite("demo/ping", {})).toBe(true);
    expect(mayWrite("events.iterate.com/agent/context-added", { origin: "/agents/a" })).toBe(true);
  });

  test("a type spelled like a member of Object.prototype is an ordinary client type", () => {
    for (const type of ["constructor", "__proto__", "toString", "valueOf", "hasOwnProperty"]) {
      expect(writeRuleOf(type), type).toBeUndefined();
      expect(mayWrite(type, { origin: "/", principal: "tester" }), type).toBe(true);
      expect(mayWrite(type, { platform: "context" }), type).toBe(true);
    }
  });

  test("each row names who may write it, and nobody else may", () => {
    expect(mayWrite("events.iterate.com/itx/capability-provided", { platform: "capability-host" })).toBe(true);
    expect(mayWrite("events.iterate.com/itx/capability-provided", { platform: "agent" })).toBe(false);
    expect(mayWrite("events.iterate.com/itx/capability-provided", { platform: "processor-host:agent" })).toBe(false);
    expect(mayWrite("events.iterate.com/itx/capability-provided", { origin: "/", principal: "admin" })).toBe(false);
    expect(mayWrite("events.iterate.com/itx/run-settled", { platform: "processor-host:core" })).toBe(true);
    expect(mayWrite("events.iterate.com/itx/run-settled", { platform: "processor-host:tally" })).toBe(false);
    // A project root's woken is the Stream's own: not the Project processor's, not the worker's.
    expect(mayWrite("events.iterate.com/stream/woken", { platform: "stream" })).toBe(true);
    expect(mayWrite("events.iterate.com/stream/woken", { platform: "processor-host:project" })).toBe(false);
    expect(mayWrite("events.iterate.com/stream/woken", { origin: "/", principal: "tester" })).toBe(false);
    // The namespace is closed: a later stream fact is the platform's until it gets a row.
    expect(mayWrite("events.iterate.com/stream/later-fact-recorded", { origin: "/" })).toBe(false);
  });
});
