import { describe, expect, it } from "vitest";
import { hasErrorCode } from "../../errors/index.ts";
import { checkPlatformEventName, isPlatformEventType, validateEventType } from "./event-type.ts";

describe("validateEventType", () => {
  it.each([
    "demo/ping",
    "events.garple.com/sales/lead-created",
    "events.iterate.com/agent/paused",
    "events.iterate.com/voice-agent/mic-frame",
    "test/counter-incremented",
    "a",
    "x".repeat(256),
    "urn:thing~v2/hello_world.done",
  ])("accepts %j", (type) => {
    expect(() => validateEventType(type)).not.toThrow();
  });

  it.each([
    ["", "must not be empty"],
    ["x".repeat(257), "at most 256"],
    ["Demo/Ping", "lowercase"],
    ["demo ping", "lowercase"],
    ["demo/\nping", "\\n"],
    ["/demo", "must start with a letter or digit"],
    ["demo//ping", "empty segment"],
    ["demo/", "ends with"],
    ["events.iterate.com/agent", "exactly two segments"], // invalid on purpose
    ["events.iterate.com/agent/llm/requested", "exactly two segments"], // invalid on purpose
    ["events.iterate.com/Agent/paused", "lowercase"], // invalid on purpose
    ["events.iterate.com/agent_x/paused", "namespace"], // invalid on purpose
    ["events.iterate.com/agent/paused--twice", "not lowercase kebab-case"], // invalid on purpose
    ["events.iterate.com/agent/-paused", "not lowercase kebab-case"], // invalid on purpose
    ["events.iterate.com/agent/9lives", "not lowercase kebab-case"], // invalid on purpose
  ])("refuses %j with INVALID_ARGUMENT mentioning %j", (type, words) => {
    let thrown: unknown;
    try {
      validateEventType(type);
    } catch (error) {
      thrown = error;
    }
    expect(hasErrorCode(thrown, "INVALID_ARGUMENT")).toBe(true);
    expect((thrown as Error).message).toContain(words);
  });

  it.each([undefined, 7, null, { type: "demo/ping" }])("refuses the non-string %j", (type) => {
    expect(() => validateEventType(type)).toThrow(/must be a string/);
  });
});

describe("isPlatformEventType", () => {
  it.each([
    ["events.iterate.com/agent/paused", true],
    ["events.iterate.com.evil/agent/paused", false],
    ["demo/ping", false],
    ["events.garple.com/sales/lead-created", false],
  ])("%j -> %j", (type, expected) => {
    expect(isPlatformEventType(type)).toBe(expected);
  });
});

describe("checkPlatformEventName", () => {
  it.each([
    "events.iterate.com/agent/paused",
    "events.iterate.com/itx/created",
    "events.iterate.com/secret/set",
    "events.iterate.com/stream/woken",
    "events.iterate.com/deployment/run-settled",
    "events.iterate.com/agent/llm-request-requested",
    "events.iterate.com/voice-agent/mic-frame",
    "events.iterate.com/voice-agent/keepalive",
    "events.iterate.com/itx/alarm-trace",
    "demo/ping",
    "events.garple.com/sales/lead-create",
  ])("finds nothing wrong with %j", (type) => {
    expect(checkPlatformEventName(type)).toEqual([]);
  });

  it.each([
    ["events.iterate.com/agent/pause", /past-tense/], // invalid on purpose
    ["events.iterate.com/agent/context-add", /past-tense/], // invalid on purpose
    ["events.iterate.com/agent/message", /past-tense/], // invalid on purpose
    ["events.iterate.com/itx/run/settled", /exactly two segments/], // invalid on purpose
    ["events.iterate.com/itx/RunSettled", /lowercase/], // invalid on purpose
    ["Demo/ping", /lowercase/],
  ])("reports %j", (type, problem) => {
    const problems = checkPlatformEventName(type);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join("\n")).toMatch(problem);
  });
});
