import type { Baselines } from "./baselines.ts";
import { interleave, report, reportTail, summarize } from "./stats.ts";
import { benchRootAt, measuredAt, openProject, type BenchTarget } from "./target.ts";

const ROUNDS = 200;
const WARM_UP = 20;
const WARM_SCRIPT = "async (itx) => 1";

async function expectOne(answer: Promise<unknown>): Promise<void> {
  const value = await answer;
  if (value !== 1) throw new Error(`a script answered ${JSON.stringify(value)}, expected 1`);
}

/**
 * `itx.run` of a trivial script from Node over Cap'n Web: warm (the same source each time, so
 * the Loader isolate cached by source and scope is reused) and cold (a fresh source each call,
 * so each run loads a new isolate), interleaved with baselines (b) and (e). The target is
 * warm <= 2 x (b) + (e), checked against (b) and (e) interleaved here and against the quiet
 * baselines measured at the start of this run. Runs and the floors beside them go to the OS
 * Worker's own socket when the run has it (decision 0030).
 */
export async function measureScripts(target: BenchTarget, baselines: Baselines): Promise<void> {
  const at = measuredAt(target);
  console.log(`scripts: the OS is measured at ${at.description}`);
  const { itx } = await openProject(target, "bench-scripts", at.url);
  const floors = benchRootAt(target, at.url);
  const bench = floors.bench;
  const run = Date.now().toString(36);
  let fresh = 0;
  // A comment changes the source, and with it the isolate's id, without changing the work.
  const coldScript = () => `async (itx) => 1 /* cold ${run} ${fresh++} */`;
  const doName = `scripts-b-${run}`;
  const loaderInside: number[] = [];
  try {
    // Warm up: the project's stream and host, the warm script's isolate, and the (b) object.
    for (let i = 0; i < WARM_UP; i++) {
      await expectOne(itx.run(WARM_SCRIPT));
      await expectOne(itx.run(coldScript()));
      await bench.doNoop(doName);
      await bench.loaderCall(`scripts-e-${run}-warm-up-${i}`);
    }
    const samples = await interleave(ROUNDS, {
      warm: () => expectOne(itx.run(WARM_SCRIPT)),
      cold: () => expectOne(itx.run(coldScript())),
      b: () => bench.doNoop(doName),
      e: async () => loaderInside.push((await bench.loaderCall(`scripts-e-${run}-${loaderInside.length}`)).ms),
    });
    const warm = summarize(samples.warm);
    const cold = summarize(samples.cold);
    const bSummary = summarize(samples.b);
    const eSummary = summarize(loaderInside);
    const b = bSummary.median;
    const e = eSummary.median;
    report("scripts.run_warm.median", warm.median, "ms");
    reportTail("scripts.run_warm", warm);
    report("scripts.run_cold.median", cold.median, "ms (a new isolate per call)");
    reportTail("scripts.run_cold", cold);
    report("scripts.run_cold.minus_warm.median", cold.median - warm.median, "ms (loading the isolate)");
    report("scripts.run.baseline_b_same_run.median", b, "ms");
    reportTail("scripts.run.baseline_b_same_run", bSummary);
    report("scripts.run.baseline_e_same_run.median", e, "ms (Loader load-and-call, timed inside the Worker)");
    reportTail("scripts.run.baseline_e_same_run", eSummary);
    report("scripts.run_cold.ratio_to_e", cold.median / e, `x (target <= 1.5: ${cold.median <= 1.5 * e ? "met" : "missed"})`);
    for (const [name, goal] of [
      ["interleaved", 2 * b + e],
      ["quiet", 2 * baselines.doNoop + baselines.loader],
    ] as const) {
      report(`scripts.run_warm.target_${name}`, goal, `ms (2 x b + e, ${name === "quiet" ? "from the baselines at the start of this run" : "b and e interleaved above"})`);
      report(`scripts.run_warm.ratio_to_target_${name}`, warm.median / goal, `x (target <= 1: ${warm.median <= goal ? "met" : "missed"})`);
    }
  } finally {
    itx[Symbol.dispose]();
    floors.dispose();
  }
}
