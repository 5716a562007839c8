import { newWebSocketRpcSession } from "capnweb";
import { connectItx } from "iterate/client";
import { interleave, report, reportTail, summarize, time } from "./stats.ts";
import { benchRootAt, measuredAt, type BenchRoot, type BenchTarget } from "./target.ts";

// oxlint-disable typescript/no-explicit-any -- capability paths are dynamic by design

const CALLS = 1_000;
/** Issue #18: 1,000 concurrent sessions, 20 calls each, with no errors. */
const SESSIONS = 1_000;
const CALLS_PER_SESSION = 20;

/**
 * Capability figures: a live capability called from a second session (against baseline (b) in
 * the same run), the same through chains of extends, describe with many mounts, and many
 * concurrent sessions.
 */
export async function measureCapabilities(target: BenchTarget): Promise<void> {
  const auth = { type: "admin-secret" as const, secret: target.adminSecret };
  // Sessions and the floors beside them at the OS Worker's own socket when the run has it (decision 0030).
  const at = measuredAt(target);
  console.log(`capability: the OS is measured at ${at.description}`);
  const floors = benchRootAt(target, at.url);
  const bench = floors.bench;
  const open = (): any => connectItx({ baseUrl: at.url, auth });
  const session = open();
  const provider = open();
  const caller = open();
  try {
    const slug = `bench-${Date.now().toString(36)}`;
    const { projectId } = await session.projects.create({ slug }).whoami();
    const providerItx = provider.projects.get(projectId);
    await providerItx.provideCapability({ name: "echo", capability: (value: number) => value });
    const itx = caller.projects.get(projectId);
    // The raw floor under any live capability, with no platform code on the path.
    const rawProvider = newWebSocketRpcSession<BenchRoot>(`${at.url.replace(/^http/, "ws")}/api/bench`);
    const floorName = `floor-${Date.now()}`;
    await rawProvider.keepCallback(floorName, (value: number) => value);
    await itx.provideCapability({ name: "whoAmI", capability: { type: "itx-expression", steps: [{ path: ["whoami"] }] } });

    // A chain of extends, each link a context of its own; the call falls through to the root.
    const chains: Record<number, any> = { 0: itx };
    let link = itx;
    for (let depth = 1; depth <= 8; depth++) {
      link = link.extend({ name: `chain-${depth}` });
      await link.whoami();
      chains[depth] = link;
    }
    for (let i = 0; i < 50; i++) {
      await itx.echo(i);
      await bench.doNoop("caps-b");
      for (const depth of [1, 4, 8]) await chains[depth].echo(i);
    }
    // Shuffled each round, like the other groups: a call leaves work behind (releases, disposals)
    // that a fixed rotation would always charge to the same neighbour.
    const samples: Record<string, number[]> = await interleave(CALLS, {
      floor: () => bench.callKeptCallback(floorName, 1),
      live: () => itx.echo(1),
      expression: () => itx.whoAmI(),
      b: () => bench.doNoop("caps-b"),
      d1: () => chains[1].echo(1),
      d4: () => chains[4].echo(1),
      d8: () => chains[8].echo(1),
    });
    const live = summarize(samples.live ?? []);
    const b = summarize(samples.b ?? []);
    report("capability.live_call.median", live.median, "ms");
    reportTail("capability.live_call", live);
    report("capability.live_call.baseline_b_same_run.median", b.median, "ms");
    reportTail("capability.live_call.baseline_b_same_run", b);
    report("capability.live_call.ratio_to_b", live.median / b.median, "x (target <= 2.5)");
    const floorSummary = summarize(samples.floor ?? []);
    const floor = floorSummary.median;
    report("capability.raw_kept_callback_floor.median", floor, "ms (client -> Worker -> DO -> provider, no platform code)");
    reportTail("capability.raw_kept_callback_floor", floorSummary);
    report("capability.raw_kept_callback_floor.ratio_to_b", floor / b.median, "x");
    report("capability.live_call.ratio_to_floor", live.median / floor, "x");
    const expression = summarize(samples.expression ?? []);
    report("capability.expression_call.median", expression.median, "ms (no provider hop)");
    reportTail("capability.expression_call", expression);
    const depth1 = summarize(samples.d1 ?? []).median;
    for (const depth of [1, 4, 8]) {
      const figures = summarize(samples[`d${depth}`] ?? []);
      report(`capability.extend_depth_${depth}.median`, figures.median, "ms");
      reportTail(`capability.extend_depth_${depth}`, figures);
    }
    report("capability.extend_depth_8_vs_1", summarize(samples.d8 ?? []).median / depth1, "x (target <= 2)");

    // A revoke on an ancestor is visible to the very next call down the chain.
    const provision = await providerItx.provideCapability({ name: "gone", capability: () => "here" });
    await chains[8].gone();
    await provision.revoke();
    const after = await chains[8].gone().then(() => "still reachable", (error: { code?: string }) => error.code);
    report("capability.revoke_visible_next_call_at_depth_8", after === "NOT_FOUND" ? 1 : 0, "(1 = yes)");

    // The inventory with 10 and with 1,000 mounts.
    for (const count of [10, 1_000]) {
      const context = itx.extend({ name: `describe-${count}` });
      for (let i = 0; i < count; i += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, count - i) }, (_, j) =>
            context.provideCapability({ name: `cap${i + j}`, instructions: `capability number ${i + j}`, capability: { type: "itx-expression", steps: [{ path: ["streams", "get"], args: ["/x"] }] } }),
          ),
        );
      }
      const runs: number[] = [];
      for (let i = 0; i < 20; i++) runs.push(await time(() => context.__describe()));
      const figures = summarize(runs);
      report(`capability.describe_${count}_mounts.median`, figures.median, "ms");
      reportTail(`capability.describe_${count}_mounts`, figures);
    }

    // SESSIONS concurrent sessions, CALLS_PER_SESSION sequential calls each; every answer is checked.
    const sessions = Array.from({ length: SESSIONS }, () => open());
    const name = `capability.concurrent_${SESSIONS}x${CALLS_PER_SESSION}`;
    const latencies: number[] = [];
    const errors: string[] = [];
    const started = performance.now();
    await Promise.all(
      sessions.map(async (each: any) => {
        const project = each.projects.get(projectId);
        for (let i = 0; i < CALLS_PER_SESSION; i++) {
          try {
            let answer: unknown;
            latencies.push(await time(async () => (answer = await project.echo(i))));
            if (answer !== i) errors.push(`echo(${i}) answered ${JSON.stringify(answer)}`);
          } catch (error) {
            errors.push((error as { code?: string }).code ?? String(error));
          }
        }
      }),
    );
    const wall = performance.now() - started;
    const concurrent = summarize(latencies);
    report(`${name}.errors`, errors.length, `errors (target 0${errors.length > 0 ? `; first: ${errors[0]}` : ""})`);
    report(`${name}.median`, concurrent.median, "ms");
    reportTail(name, concurrent);
    report(`${name}.throughput`, (SESSIONS * CALLS_PER_SESSION) / (wall / 1000), "calls/s");
    for (const each of sessions) each[Symbol.dispose]?.();
    rawProvider[Symbol.dispose]();
  } finally {
    caller[Symbol.dispose]();
    provider[Symbol.dispose]();
    session[Symbol.dispose]();
    floors.dispose();
  }
}
