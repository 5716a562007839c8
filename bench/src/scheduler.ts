import { report, reportTail, summarize } from "./stats.ts";
import { openProject, type BenchTarget } from "./target.ts";

const FIRINGS = 60;
const FIRED = "events.iterate.com/itx/schedule-fired";
const FAILED = "events.iterate.com/itx/schedule-failed";

/**
 * Schedule firing lateness at `{ every: 1 }` over FIRINGS occurrences: for each slot, how long
 * after it the occurrence's `itx/schedule-fired` fact was committed (alarm, script run in the
 * runner, fact), and how long after it the script started (the fact's time less the run's
 * duration). Both are the OS's own clock, so Node's timers do not enter. Target: median < 250 ms.
 */
export async function measureScheduler(target: BenchTarget): Promise<void> {
  const { itx } = await openProject(target, "bench-scheduler");
  try {
    const set = await itx.scheduler.set({ key: "bench", every: 1, script: `async (itx) => { await itx.append({ type: "bench/beat" }) }` });
    // oxlint-disable-next-line typescript/no-explicit-any -- events are read untyped from the wire
    let settled: any[] = [];
    const deadline = Date.now() + (FIRINGS + 60) * 1000;
    while (settled.length < FIRINGS && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      settled = await itx.getEvents({ types: [FIRED, FAILED], afterOffset: set.definedAtOffset, limit: 500 });
    }
    await itx.scheduler.cancel("bench");
    settled = settled.slice(0, FIRINGS);
    const failed = settled.filter((event) => event.type === FAILED);
    if (failed.length > 0) throw new Error(`${failed.length} occurrences failed: ${JSON.stringify(failed[0].payload.error)}`);
    const toFact = settled.map((event) => Date.parse(event.createdAt) - event.payload.scheduledFor);
    const toStart = settled.map((event) => Date.parse(event.createdAt) - event.payload.durationMs - event.payload.scheduledFor);
    const coalesced = settled.reduce((sum, event) => sum + event.payload.coalesced, 0);
    const fact = summarize(toFact);
    const start = summarize(toStart);
    report("scheduler.every_1s.firings", settled.length, "occurrences");
    report("scheduler.every_1s.lateness_to_fired_fact.median", fact.median, `ms (target < 250: ${fact.median < 250 ? "met" : "missed"})`);
    reportTail("scheduler.every_1s.lateness_to_fired_fact", fact);
    report("scheduler.every_1s.lateness_to_fired_fact.max", fact.max, "ms");
    report("scheduler.every_1s.lateness_to_script_start.median", start.median, "ms (the fact's time less the run's duration)");
    reportTail("scheduler.every_1s.lateness_to_script_start", start);
    report("scheduler.every_1s.lateness_to_script_start.max", start.max, "ms");
    report("scheduler.every_1s.coalesced_slots", coalesced, "slots missed and folded into a later occurrence");
  } finally {
    itx[Symbol.dispose]();
  }
}
