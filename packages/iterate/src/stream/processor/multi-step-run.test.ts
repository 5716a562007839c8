import { describe, expect, it } from "vitest";
import {
  MAX_RUN_ATTEMPTS,
  nextRunAction,
  runSettledPayloadSchema,
  runState,
  settledKey,
  stepKey,
  type RunState,
} from "./multi-step-run.ts";
import { committedEvents, type PartialEvent } from "../test-support/index.ts";

const facts = {
  requested: "test/build-requested",
  attemptStarted: "test/build-attempt-started",
  steps: ["test/build-compiled", "test/build-uploaded"],
  settled: "test/build-settled",
};
const build = runState(facts);

/** Folds a list of facts into the run opened at offset 1. */
function foldRun(partials: PartialEvent[]): RunState | undefined {
  let run: RunState | undefined;
  for (const event of committedEvents(partials)) if (build.runOf(event) === 1) run = build.reduce(run, event);
  return run;
}

const requested = { type: facts.requested, payload: { target: "prod" } };
const started = (attempt: number, requestOffset = 1) => ({ type: facts.attemptStarted, payload: { requestOffset, attempt } });
const compiled = (attempt: number) => ({ type: "test/build-compiled", payload: { requestOffset: 1, attempt } });
const settled = (status: string) => ({ type: facts.settled, payload: { requestOffset: 1, status } });

describe("keys", () => {
  it("keys a step by slug, fact, request and attempt, and the settlement by request alone", () => {
    expect(stepKey("deployment", "run-attempt-started", 12, 2)).toBe("deployment/run-attempt-started:12:2");
    expect(settledKey("deployment", 12)).toBe("deployment/settled:12");
  });
});

describe("runState reduce", () => {
  it("has no run before the request", () => {
    expect(foldRun([started(1), settled("succeeded")])).toBeUndefined();
  });

  it.each<[string, PartialEvent[], Partial<RunState>]>([
    ["the request opens the run", [requested], { requestOffset: 1, attempt: 0, status: "requested", lastStep: "build-requested", lastStepOffset: 1 }],
    ["an attempt starts", [requested, started(1)], { attempt: 1, status: "running", lastStep: "build-attempt-started", lastStepOffset: 2 }],
    ["a step lands", [requested, started(1), compiled(1)], { attempt: 1, lastStep: "build-compiled", lastStepOffset: 3 }],
    ["a repeated attempt-started changes nothing", [requested, started(1), compiled(1), started(1)], { attempt: 1, lastStepOffset: 3 }],
    ["a step of an older attempt changes nothing", [requested, started(1), started(2), compiled(1)], { attempt: 2, lastStep: "build-attempt-started", lastStepOffset: 3 }],
    ["a fact of another run changes nothing", [requested, started(1, 99)], { attempt: 0, status: "requested" }],
    ["settling ends the run", [requested, started(1), settled("succeeded")], { status: "succeeded", lastStep: "build-settled", lastStepOffset: 3 }],
    ["nothing moves a settled run", [requested, started(1), settled("refused"), started(2), settled("failed")], { status: "refused", attempt: 1, lastStepOffset: 3 }],
  ])("%s", (_name, events, expected) => {
    expect(foldRun(events)).toMatchObject(expected);
  });

  it("names the run of each fact", () => {
    const [request, attempt, other] = committedEvents([requested, started(1, 1), { type: "demo/ping" }]);
    expect([request, attempt, other].map((event) => event && build.runOf(event))).toEqual([1, 1, undefined]);
  });
});

const run = (attempt: number, status: RunState["status"]): RunState => ({ requestOffset: 1, attempt, lastStep: "x", lastStepOffset: 2, status });

describe("nextRunAction", () => {
  it.each([
    ["no run", undefined, { kind: "none" }],
    ["a settled run", run(1, "succeeded"), { kind: "none" }],
    ["a fresh request", run(0, "requested"), { kind: "attempt", attempt: 1 }],
    ["a run found mid-attempt", run(1, "running"), { kind: "attempt", attempt: 2 }],
    ["a run whose attempts are spent", run(MAX_RUN_ATTEMPTS, "running"), { kind: "exhausted" }],
  ])("%s", (_name, state, expected) => {
    expect(nextRunAction(state)).toEqual(expected);
  });
});

describe("runSettledPayloadSchema", () => {
  it.each([
    [{ requestOffset: 3, status: "succeeded" }, true],
    [{ requestOffset: 3, status: "unavailable", error: "host died three times" }, true],
    [{ requestOffset: 3, status: "cancelled" }, false],
    [{ requestOffset: 0, status: "failed" }, false],
    [{ requestOffset: 3, status: "failed", extra: 1 }, false],
  ])("%j valid: %j", (payload, valid) => {
    expect(runSettledPayloadSchema.safeParse(payload).success).toBe(valid);
  });
});
