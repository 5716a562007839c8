import { RpcTarget } from "capnweb";
import { sendThroughPipe } from "../egress/egress-pipe.ts";
import { ItxRpcTarget } from "../itx/itx-rpc-target.ts";
import type { BenchEnv } from "./bench-env.ts";

const TRIVIAL_MODULE = "export default { add(a, b) { return a + b; }, fetch() { return new Response('ok'); } };";

/**
 * The benchmark's own Cap'n Web root (never part of /api): the raw operations whose timings are
 * the baselines that every platform target is stated against. Served only by the bench worker
 * (bench-worker.ts), never by the deployed OS.
 */
export class BenchRootRpcTarget extends RpcTarget {
  readonly #env: BenchEnv;

  constructor(env: BenchEnv) {
    super();
    this.#env = env;
  }

  /**
   * The floor of any live capability: one session's callback kept in a Durable Object and called
   * from another session (client -> Worker -> DO -> provider's Worker -> provider, and back).
   */
  async keepCallback(name: string, callback: unknown): Promise<void> {
    await this.#env.BENCH.getByName(name).keepCallback(callback as (value: number) => unknown);
  }

  async callKeptCallback(name: string, value: number): Promise<unknown> {
    return this.#env.BENCH.getByName(name).callKeptCallback(value);
  }

  /** (a) the raw Cap'n Web round trip. */
  ping(): null {
    return null;
  }

  /** (b) Worker -> Durable Object no-op -> back. */
  async doNoop(name: string): Promise<null> {
    return this.#env.BENCH.getByName(name).noop();
  }

  /** (c) the same with one SQLite row inserted. */
  async doInsertOne(name: string): Promise<number> {
    return this.#env.BENCH.getByName(name).insertOne("x");
  }

  /** (d) `count` inserts inside one Durable Object request. */
  async doInsertMany(name: string, count: number): Promise<number> {
    return this.#env.BENCH.getByName(name).insertMany(count);
  }

  async fillJournal(name: string, count: number): Promise<number> {
    return this.#env.BENCH.getByName(name).fillJournal(count);
  }

  async replayJournal(name: string): Promise<{ offset: number; count: number }> {
    return this.#env.BENCH.getByName(name).replayJournal();
  }

  /** (e) load a trivial module under a fresh id and call it once; answers the time taken inside the Worker. */
  async loaderCall(id: string): Promise<{ status: number; ms: number }> {
    // Time in workerd advances across I/O, and loading plus calling is I/O, so this is meaningful.
    const start = performance.now();
    const worker = this.#env.LOADER.get(id, () => ({
      compatibilityDate: "2026-08-01",
      mainModule: "main.js",
      modules: { "main.js": TRIVIAL_MODULE },
      globalOutbound: null,
    }));
    const response = await worker.getEntrypoint().fetch("http://bench/");
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - start };
  }

  /** The floor under egress: a plain `fetch` made by the Worker itself; answers the status. */
  async directFetch(url: string): Promise<number> {
    const response = await fetch(url);
    await response.arrayBuffer();
    return response.status;
  }

  /**
   * The same fetch timed inside the Worker (time advances across I/O): the floor a script's fetch,
   * timed inside the script, is compared with, without either one's Cap'n Web round trip from Node.
   */
  async timedDirectFetch(url: string): Promise<number> {
    const start = performance.now();
    const response = await fetch(url);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`the direct fetch answered ${response.status}`);
    return performance.now() - start;
  }

  /** The platform pipe alone (the guard, the placeholder scan, the send), as egress ends; answers the status. */
  async pipeFetch(projectId: string, url: string): Promise<number> {
    const response = await sendThroughPipe(this.#env, { projectId, origin: "/", principal: "bench" }, url);
    await response.arrayBuffer();
    return response.status;
  }

  /**
   * The whole egress road of a project's root context, as `itx.fetch` and a script's bare `fetch`
   * take it: the `fetch` shadow lookup on the context's chain, then the pipe. Answers the status.
   */
  async itxFetch(projectId: string, url: string): Promise<number> {
    const itx = new ItxRpcTarget({ env: this.#env, principal: "bench", projectId, path: "/", origin: "/" });
    const response = await itx.fetch(url);
    await response.arrayBuffer();
    return response.status;
  }
}
