import { startLoopbackHttpServer } from "./peer/loopback-http.ts";
import { interleave, report, reportTail, summarize } from "./stats.ts";
import { openProject, type BenchTarget } from "./target.ts";

const ROUNDS = 300;
const WARM_UP = 20;
/** Fetches one timed call makes inside the code, to a loopback server. */
const INNER_FETCHES = 20;

// One timed loop of fetches, as the code itself sees it (time in an isolate advances across I/O).
const timedLoop = (url: string) => `const start = performance.now();
    for (let i = 0; i < ${INNER_FETCHES}; i++) {
      const response = await fetch(${JSON.stringify(url)});
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error("the fetch answered " + response.status);
    }
    return (performance.now() - start) / ${INNER_FETCHES};`;

const files = (url: string) => ({
  "index.ts": `import { DurableObject, WorkerEntrypoint } from "cloudflare:workers";
export default class Pinger extends WorkerEntrypoint {
  ping(n: number): number { return n + 1; }
  async timedFetch(): Promise<number> { ${timedLoop(url)} }
}
export class DurablePinger extends DurableObject {
  ping(n: number): number { return n + 1; }
  async timedFetch(): Promise<number> { ${timedLoop(url)} }
}`,
});

interface Pinger {
  ping(n: number): Promise<number>;
  timedFetch(): Promise<number>;
}

/**
 * Warm calls on dynamic workers over one connection, interleaved with `whoami` on the same
 * connection (one Worker -> Durable Object call: the floor a call through the OS stands on), and
 * their bare fetches to a loopback server timed inside the code beside a script's.
 */
export async function measureWorkers(target: BenchTarget): Promise<void> {
  const server = await startLoopbackHttpServer();
  const { itx } = await openProject(target, "bench-workers");
  const url = `${server.url}/tiny`;
  const stateless = itx.workers.get({ source: { files: files(url) } }) as Pinger;
  const durable = itx.workers.get({ source: { files: files(url) }, durableObject: { className: "DurablePinger", key: "bench" } }) as Pinger;
  const timedScript = `async () => { ${timedLoop(url)} }`;
  const inner = { stateless: [] as number[], durable: [] as number[], script: [] as number[] };
  let n = 0;
  const expectNext = async (worker: Pinger) => {
    const sent = ++n;
    if ((await worker.ping(sent)) !== sent + 1) throw new Error("the worker answered something else");
  };
  const series = {
    whoami: () => itx.whoami(),
    stateless: () => expectNext(stateless),
    durable: () => expectNext(durable),
    statelessFetch: async () => void inner.stateless.push(await stateless.timedFetch()),
    durableFetch: async () => void inner.durable.push(await durable.timedFetch()),
    scriptFetch: async () => void inner.script.push((await itx.run(timedScript)) as number),
  };
  try {
    for (let i = 0; i < WARM_UP; i++) for (const call of Object.values(series)) await call();
    inner.stateless.length = 0;
    inner.durable.length = 0;
    inner.script.length = 0;
    const samples = await interleave(ROUNDS, series);
    const floor = summarize(samples.whoami);
    report("workers.whoami_same_connection.median", floor.median, "ms (one call through the OS to a Durable Object: the floor below)");
    reportTail("workers.whoami_same_connection", floor);
    for (const kind of ["stateless", "durable"] as const) {
      const calls = summarize(samples[kind]);
      report(`workers.${kind}_call.median`, calls.median, `ms (a warm ${kind} worker's method, over the same connection)`);
      reportTail(`workers.${kind}_call`, calls);
      report(`workers.${kind}_call.ratio_to_whoami`, calls.median / floor.median, "x");
    }
    for (const kind of ["stateless", "durable", "script"] as const) {
      const fetches = summarize(inner[kind]);
      report(`workers.inner.${kind}_fetch.median`, fetches.median, `ms (a bare fetch to loopback, timed inside the ${kind === "script" ? "script" : `${kind} worker`}, ${INNER_FETCHES} per sample)`);
      reportTail(`workers.inner.${kind}_fetch`, fetches);
    }
  } finally {
    itx[Symbol.dispose]();
    await server.close();
  }
}
