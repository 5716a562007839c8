import { report, reportTail, summarize, time } from "./stats.ts";
import type { BenchTarget } from "./target.ts";

export interface Baselines {
  /** (a) raw Cap'n Web round trip, median ms. */
  ping: number;
  /** (b) Worker -> DO no-op -> back, median ms. */
  doNoop: number;
  /** (c) the same with one SQLite insert, median ms. */
  doInsert: number;
  /** (e) Worker Loader load-and-call, timed inside the Worker, median ms. */
  loader: number;
}

const ROUND_TRIPS = 2_000;
const BULK_ROWS = 10_000;
const BULK_REPEATS = 5;
const LOADER_CALLS = 50;

/**
 * The five baselines every platform target is a ratio of. (a)-(c) are interleaved call by call so
 * that machine noise hits all three alike.
 */
export async function measureBaselines({ bench }: BenchTarget): Promise<Baselines> {
  const doName = `baseline-${crypto.randomUUID()}`;
  // Warm up: first calls pay for isolate and Durable Object start.
  for (let i = 0; i < 50; i++) {
    await bench.ping();
    await bench.doNoop(doName);
    await bench.doInsertOne(doName);
  }
  const ping: number[] = [];
  const noop: number[] = [];
  const insert: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    ping.push(await time(() => bench.ping()));
    noop.push(await time(() => bench.doNoop(doName)));
    insert.push(await time(() => bench.doInsertOne(doName)));
  }
  const a = summarize(ping);
  const b = summarize(noop);
  const c = summarize(insert);
  report("baseline.a_capnweb_ping.median", a.median, "ms");
  reportTail("baseline.a_capnweb_ping", a);
  report("baseline.b_worker_do_noop.median", b.median, "ms");
  reportTail("baseline.b_worker_do_noop", b);
  report("baseline.c_worker_do_insert.median", c.median, "ms");
  reportTail("baseline.c_worker_do_insert", c);

  const bulk: number[] = [];
  for (let i = 0; i < BULK_REPEATS; i++) {
    bulk.push(await time(() => bench.doInsertMany(`bulk-${crypto.randomUUID()}`, BULK_ROWS)));
  }
  report("baseline.d_do_sqlite_insert_rate", BULK_ROWS / (summarize(bulk).median / 1000), "rows/s");

  const loaderRoundTrip: number[] = [];
  const loaderInside: number[] = [];
  const prefix = crypto.randomUUID();
  for (let i = 0; i < LOADER_CALLS; i++) {
    let inside = 0;
    loaderRoundTrip.push(await time(async () => (inside = (await bench.loaderCall(`${prefix}-${i}`)).ms)));
    loaderInside.push(inside);
  }
  const inside = summarize(loaderInside);
  const e = inside.median;
  report("baseline.e_loader_load_and_call.median", e, "ms");
  reportTail("baseline.e_loader_load_and_call", inside);
  const viaCapnweb = summarize(loaderRoundTrip);
  report("baseline.e_loader_load_and_call_via_capnweb.median", viaCapnweb.median, "ms");
  reportTail("baseline.e_loader_load_and_call_via_capnweb", viaCapnweb);
  return { ping: a.median, doNoop: b.median, doInsert: c.median, loader: e };
}
