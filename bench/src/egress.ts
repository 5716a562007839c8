import { startLoopbackHttpServer } from "./peer/loopback-http.ts";
import { interleave, report, reportTail, summarize } from "./stats.ts";
import { openProject, type BenchTarget } from "./target.ts";

const ROUNDS = 300;
const WARM_UP = 20;
/** Issue #5: the egress road may add at most this much to a fetch the Worker makes itself. */
const ADDED_MS_TARGET = 2;
/** Each series' name in the printed figures (its median's line names it the same way). */
const TAIL_NAMES = {
  ping: "baseline_a_same_run",
  direct: "direct_worker_fetch",
  pipe: "pipe_only_fetch",
  itxFetch: "itx_fetch",
  fromNode: "itx_fetch_from_node",
  script: "script_fetch",
  scriptNoFetch: "script_no_fetch",
} as const;

async function expect200(answer: unknown): Promise<void> {
  const status = await answer;
  if (status !== 200) throw new Error(`egress answered ${JSON.stringify(status)}, expected 200`);
}

/**
 * Egress to a loopback HTTP server, all series interleaved: the fetch made directly by the
 * Worker; the pipe alone; the whole `itx.fetch` road (shadow lookup, then the pipe); the same
 * from Node with the Response carried back; and a script that fetches beside the same script
 * without the fetch (its bare fetch goes out through its globalOutbound, the same road).
 */
export async function measureEgress(target: BenchTarget): Promise<void> {
  const server = await startLoopbackHttpServer();
  const { projectId, itx } = await openProject(target, "bench-egress");
  const url = `${server.url}/tiny`;
  const fetchScript = `async () => (await fetch(${JSON.stringify(url)})).status`;
  // The same fetch timed inside the script (time in an isolate advances across I/O), against the
  // Worker's own fetch timed inside the Worker: the road's cost without the runs around it.
  const timedScript = `async () => {
    const start = performance.now();
    const response = await fetch(${JSON.stringify(url)});
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error("the script's fetch answered " + response.status);
    return performance.now() - start;
  }`;
  const inner = { direct: [] as number[], script: [] as number[] };
  const series = {
    ping: () => target.bench.ping(),
    direct: () => expect200(target.bench.directFetch(url)),
    pipe: () => expect200(target.bench.pipeFetch(projectId, url)),
    itxFetch: () => expect200(target.bench.itxFetch(projectId, url)),
    fromNode: async () => {
      const response = await itx.fetch(url);
      await response.text();
      await expect200(response.status);
    },
    script: () => expect200(itx.run(fetchScript)),
    scriptNoFetch: () => expect200(itx.run("async () => 200")),
    timedDirect: async () => void inner.direct.push(await target.bench.timedDirectFetch(url)),
    timedScript: async () => void inner.script.push(await itx.run(timedScript)),
  };
  try {
    for (let i = 0; i < WARM_UP; i++) for (const call of Object.values(series)) await call();
    const before = server.answered();
    inner.direct.length = 0;
    inner.script.length = 0;
    const samples = await interleave(ROUNDS, series);
    // A check that every road really reached the server: all series but ping and scriptNoFetch send once a round.
    const sent = server.answered() - before;
    const expected = (Object.keys(series).length - 2) * ROUNDS;
    if (sent !== expected) throw new Error(`the server answered ${sent} requests, expected ${expected}`);
    const median = (name: keyof typeof series) => summarize(samples[name]).median;
    const p99 = (name: keyof typeof TAIL_NAMES) => reportTail(`egress.${TAIL_NAMES[name]}`, summarize(samples[name]));
    const verdict = (added: number) => `ms (target <= ${ADDED_MS_TARGET}: ${added <= ADDED_MS_TARGET ? "met" : "missed"})`;
    report("egress.direct_worker_fetch.median", median("direct"), "ms (Node -> Worker's own fetch -> Node)");
    p99("direct");
    report("egress.pipe_only_fetch.median", median("pipe"), "ms (the same through the pipe alone: guard, placeholder scan, send)");
    p99("pipe");
    report("egress.itx_fetch.median", median("itxFetch"), "ms (the same through the whole itx.fetch road: shadow lookup, then the pipe)");
    p99("itxFetch");
    report("egress.pipe_only_added_over_direct.median", median("pipe") - median("direct"), "ms");
    report("egress.shadow_lookup.median", median("itxFetch") - median("pipe"), "ms (itx.fetch road minus the pipe alone)");
    const added = median("itxFetch") - median("direct");
    report("egress.itx_fetch_added_over_direct.median", added, verdict(added));
    report("egress.itx_fetch_from_node.median", median("fromNode"), "ms (itx.fetch called from Node, the Response carried back over Cap'n Web)");
    p99("fromNode");
    report("egress.script_fetch.median", median("script"), "ms (itx.run of a script that fetches)");
    p99("script");
    report("egress.script_no_fetch.median", median("scriptNoFetch"), "ms (the same script shape, no fetch)");
    p99("scriptNoFetch");
    const inScript = median("script") - median("scriptNoFetch");
    report("egress.script_fetch_cost.median", inScript, "ms (script with fetch minus without)");
    // The fetch alone as the Worker makes it: the direct series less its Cap'n Web round trip (a).
    report("egress.baseline_a_same_run.median", median("ping"), "ms");
    p99("ping");
    const scriptAdded = inScript - (median("direct") - median("ping"));
    report("egress.script_fetch_added_over_direct.median", scriptAdded, verdict(scriptAdded));
    const direct = summarize(inner.direct);
    const script = summarize(inner.script);
    report("egress.inner.direct_fetch.median", direct.median, "ms (the Worker's own fetch, timed inside the Worker)");
    report("egress.inner.direct_fetch.p99", direct.p99, "ms");
    report("egress.inner.script_fetch.median", script.median, "ms (a script's bare fetch, timed inside the script)");
    report("egress.inner.script_fetch.p99", script.p99, "ms");
    report("egress.inner.script_fetch_added_over_direct.median", script.median - direct.median, verdict(script.median - direct.median));
    report("egress.inner.script_fetch_added_over_direct.p99", script.p99 - direct.p99, "ms");
  } finally {
    itx[Symbol.dispose]();
    await server.close();
  }
}
