// `BENCH_ONLY=scale`: a project crowded with contexts against a fresh one (issue #18). Not in the
// default run: creating the crowd takes minutes.
import { interleave, report, reportTail, summarize } from "./stats.ts";
import { openProject, type BenchTarget } from "./target.ts";

// oxlint-disable typescript/no-explicit-any -- capability paths are dynamic by design

/** Contexts in the crowded project, each with a mount of its own (BENCH_SCALE_CONTEXTS to change). */
const CONTEXTS = Number(process.env.BENCH_SCALE_CONTEXTS ?? 10_000);
/** Creations in flight at once while filling the crowd. */
const PARALLEL = 32;
/**
 * The fill pauses after every FILL_BURST contexts for FILL_PAUSE_MS (BENCH_SCALE_PAUSE_MS), so the
 * local OS can let idle contexts leave memory. A stream releases an idle processor session from a
 * timer (DELIVERY_SESSION_IDLE_MS, 30 s), and local workerd runs every object on one thread whose
 * timers wait while requests keep it busy: without a quiet moment nothing is released and its
 * SQLite files exhaust the open-file limit (bench/README.md). A deployment has no such thread.
 */
const FILL_BURST = 1_000;
const FILL_PAUSE_MS = Number(process.env.BENCH_SCALE_PAUSE_MS ?? 45_000);
const ROUNDS = 200;
const WARM_UP = 20;
/** The figures may differ from the fresh project's by at most this ratio. */
const WITHIN = 1.2;
const DEPTH = 8;
/** A durable mount that needs no provider: the figures are the platform's own. */
const WHOAMI = { type: "itx-expression", steps: [{ path: ["whoami"] }] };

interface Shape {
  /** A child of the root with one mount, like every member of the crowd. */
  member: any;
  /** The end of a chain of DEPTH extends below the root. */
  leaf: any;
  itx: any;
}

/**
 * The same shape in two projects: a root with a `probe` mount, a chain of DEPTH contexts below it,
 * and a member context with one mount. The crowded project also holds CONTEXTS contexts, each a
 * child of the root with a mount. Interleaved in both: describe of the member, describe of the
 * chain's leaf (its chain is DEPTH ancestors), and a call from the leaf that falls through all
 * DEPTH ancestors to the root's mount. Target: each within 20% of the fresh project's.
 */
export async function measureScale(target: BenchTarget): Promise<void> {
  const fresh = await openProject(target, "bench-scale-fresh");
  const crowded = await openProject(target, "bench-scale-crowded");
  try {
    const started = performance.now();
    await fill(crowded.itx);
    const fillMs = performance.now() - started;
    const pausedMs = Math.max(0, Math.ceil(CONTEXTS / FILL_BURST) - 1) * FILL_PAUSE_MS;
    const busyS = (fillMs - pausedMs) / 1000;
    report("scale.contexts_created", CONTEXTS, `contexts, each with a mount (${Math.round(fillMs / 1000)} s with ${Math.round(pausedMs / 1000)} s of pauses; ${(CONTEXTS / busyS).toFixed(0)} contexts/s with ${PARALLEL} in flight)`);
    const shapes = { fresh: await shape(fresh.itx), crowded: await shape(crowded.itx) };
    const series = Object.fromEntries(
      (["fresh", "crowded"] as const).flatMap((project) => {
        const { member, leaf } = shapes[project];
        return [
          [`${project}.describe_member`, () => member.__describe()],
          [`${project}.describe_leaf`, () => leaf.__describe()],
          [`${project}.call_through_${DEPTH}`, () => expectWhoami(leaf.probe())],
        ];
      }),
    ) as Record<string, () => Promise<unknown>>;
    for (let i = 0; i < WARM_UP; i++) for (const call of Object.values(series)) await call();
    const samples = await interleave(ROUNDS, series);
    for (const figure of ["describe_member", "describe_leaf", `call_through_${DEPTH}`]) {
      const freshFigure = summarize(samples[`fresh.${figure}`] ?? []);
      const crowdedFigure = summarize(samples[`crowded.${figure}`] ?? []);
      report(`scale.${figure}.fresh_project.median`, freshFigure.median, "ms");
      reportTail(`scale.${figure}.fresh_project`, freshFigure);
      report(`scale.${figure}.crowded_project.median`, crowdedFigure.median, `ms (${CONTEXTS} other contexts in the project)`);
      reportTail(`scale.${figure}.crowded_project`, crowdedFigure);
      const ratio = crowdedFigure.median / freshFigure.median;
      report(`scale.${figure}.crowded_over_fresh`, ratio, `x (target <= ${WITHIN}: ${ratio <= WITHIN ? "met" : "missed"})`);
    }
  } finally {
    fresh.itx[Symbol.dispose]();
    crowded.itx[Symbol.dispose]();
  }
}

async function shape(itx: any): Promise<Shape> {
  await itx.provideCapability({ name: "probe", capability: WHOAMI });
  const member = itx.extend({ name: "member" });
  await member.provideCapability({ name: "cap", capability: WHOAMI });
  let leaf = itx;
  for (let depth = 1; depth <= DEPTH; depth++) {
    leaf = leaf.extend({ name: `chain-${depth}` });
    await leaf.whoami();
  }
  const answer = await leaf.probe();
  if (answer?.path !== "/") throw new Error(`the call through ${DEPTH} ancestors answered ${JSON.stringify(answer)}`);
  return { member, leaf, itx };
}

// The expression mount answers the whoami of the context it was provided in: the root.
async function expectWhoami(answer: Promise<{ path?: string }>): Promise<void> {
  const { path } = await answer;
  if (path !== "/") throw new Error(`the probe answered from ${String(path)}, expected /`);
}

async function fill(itx: any): Promise<void> {
  for (let start = 0; start < CONTEXTS; start += FILL_BURST) {
    if (start > 0) await new Promise((resolve) => setTimeout(resolve, FILL_PAUSE_MS));
    const end = Math.min(CONTEXTS, start + FILL_BURST);
    let next = start;
    const worker = async () => {
      for (let i = next++; i < end; i = next++) {
        const context = itx.extend({ name: `crowd-${i}` });
        const provision = await context.provideCapability({ name: "cap", instructions: `member ${i} of the crowd`, capability: WHOAMI });
        provision[Symbol.dispose]?.();
        context[Symbol.dispose]?.();
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
  }
}
