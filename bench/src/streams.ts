import { newWebSocketRpcSession } from "capnweb";
import { connectItx, readEvents } from "iterate/client";
import type { Baselines } from "./baselines.ts";
import { postBatch, readAll, startDurableStreamsPeer } from "./peer/durable-streams.ts";
import { interleave, report, summarize, time, reportReadRates } from "./stats.ts";
import { measuredAt, type BenchRoot, type BenchTarget } from "./target.ts";

const SINGLE_APPENDS = 1_000;
const BATCH = 100;
const BATCH_EVENTS = 100_000;
const BIG_STREAM = 1_000_000;
const FILL_CHUNK = 500;

const total = (samples: number[]) => samples.reduce((sum, value) => sum + value, 0);
const event = (i: number) => ({ type: "bench/tick", payload: { i, t: "evt", v: "xxxxxxxx" } });
const peerItem = (i: number) => JSON.stringify({ i, t: "evt", v: "xxxxxxxx" });

/**
 * Stream figures beside the baselines and the Durable Streams reference server (file-backed),
 * measured in this run. Series that are compared are interleaved call by call.
 *
 * Like `dshttp`, our side is reached at the OS Worker's own socket (decisions 0027, 0029), and so
 * is the floor (c) interleaved with it: the local plumbing in front of the public port is not part
 * of a deployment, and there it also compresses every WebSocket message twice (decision 0028).
 */
export async function measureStreams(target: BenchTarget, baselines: Baselines): Promise<void> {
  const at = measuredAt(target);
  console.log(`stream: the OS is measured at ${at.description}`);
  // Node 22 does not parse `using`; dispose by hand.
  const session = connectItx({ baseUrl: at.url, auth: { type: "admin-secret", secret: target.adminSecret } });
  const floorRoot = at.url === target.baseUrl ? undefined : newWebSocketRpcSession<BenchRoot>(`${at.url.replace(/^http/, "ws")}/api/bench`);
  const floorBench = floorRoot ?? target.bench;
  const peer = await startDurableStreamsPeer();
  const run = `${Date.now()}`;
  try {
    // Single-event appends: ours, the raw DO insert floor (c) and the peer, interleaved.
    const ours = session.streams.get(`/bench/${run}/single`);
    const peerSingle = await peer.create("single");
    const doName = `streams-c-${run}`;
    for (let i = 0; i < 50; i++) {
      await ours.append(event(i));
      await floorBench.doInsertOne(doName);
      await peerSingle.append(peerItem(i));
    }
    // A fresh random order every round (`interleave`): the peer keeps its file system busy for a
    // moment after it answers, and whichever call follows it pays. A fixed rotation of three
    // series put ours behind the peer in two rounds of three and the floor in one.
    let mineAt = 0;
    let theirsAt = 0;
    const { mine, floor, theirs } = await interleave(SINGLE_APPENDS, {
      mine: () => ours.append(event(mineAt++)),
      floor: () => floorBench.doInsertOne(doName),
      theirs: () => peerSingle.append(peerItem(theirsAt++)),
    });
    const m = summarize(mine);
    const c = summarize(floor);
    const p = summarize(theirs);
    report("stream.single_append.median", m.median, "ms");
    report("stream.single_append.p99", m.p99, "ms");
    report("stream.single_append.baseline_c_same_run.median", c.median, "ms");
    report("stream.single_append.baseline_c_same_run.p99", c.p99, "ms");
    report("stream.single_append.ratio_to_c", m.median / c.median, "x (target <= 1.1)");
    report("stream.single_append.peer_durable_streams_file.median", p.median, "ms");
    report("stream.single_append.peer_durable_streams_file.p99", p.p99, "ms");
    report("stream.single_append.ratio_to_baseline_c_start_of_run", m.median / baselines.doInsert, `x (informative: that baseline was measured at ${target.baseUrl === at.url ? "the same address" : "the public port"})`);

    // Sequential 100-event batches, ours and the peer's alternating batch by batch.
    const batched = session.streams.get(`/bench/${run}/batches`);
    const peerBatched = await peer.create("batches");
    const batches: number[] = [];
    const peerBatches: number[] = [];
    for (let i = 0; i < BATCH_EVENTS; i += BATCH) {
      const ourBody = JSON.stringify(Array.from({ length: BATCH }, (_, j) => event(i + j)));
      const peerBody = `[${Array.from({ length: BATCH }, (_, j) => peerItem(i + j)).join(",")}]`;
      const ourTurn = async () => batches.push(await time(() => batched.appendBatch({ events: ourBody })));
      const peerTurn = async () => peerBatches.push(await time(() => postBatch(peerBatched.url, peerBody)));
      if ((i / BATCH) % 2 === 0) {
        await ourTurn();
        await peerTurn();
      } else {
        await peerTurn();
        await ourTurn();
      }
    }
    const batchRate = BATCH_EVENTS / (total(batches) / 1000);
    const peerBatchRate = BATCH_EVENTS / (total(peerBatches) / 1000);
    report("stream.batch_100_append_rate", batchRate, "events/s");
    report("stream.batch_100_append_rate.peer_durable_streams_file", peerBatchRate, "events/s");
    report("stream.batch_100_append_rate.ratio_to_peer", batchRate / peerBatchRate, "x (target >= 1.5)");
    const b100 = summarize(batches);
    const p100 = summarize(peerBatches);
    report("stream.batch_100.median", b100.median, "ms");
    report("stream.batch_100.p99", b100.p99, "ms");
    report("stream.batch_100.peer_durable_streams_file.median", p100.median, "ms");
    report("stream.batch_100.peer_durable_streams_file.p99", p100.p99, "ms");

    // Reading the 100,000-event stream from the start, three rounds each, alternating.
    const ourReads: number[] = [];
    const peerReads: number[] = [];
    for (let round = 0; round < 3; round++) {
      let read = 0;
      ourReads.push(await time(async () => {
        for await (const page of readEvents(batched, { pageSize: 10_000, prefetch: 2 })) read += page.length;
      }));
      if (read !== BATCH_EVENTS) throw new Error(`read ${read} events, expected ${BATCH_EVENTS}`);
      let peerRead = 0;
      peerReads.push(await time(async () => (peerRead = await readAll(peerBatched.url))));
      if (peerRead !== BATCH_EVENTS) throw new Error(`peer read ${peerRead} items, expected ${BATCH_EVENTS}`);
    }
    // Three rounds: the slowest stands for the tail.
    reportReadRates("stream.read_100k_from_start", BATCH_EVENTS, ourReads, peerReads, "target >= 1");

    // Append latency on a small stream and on a 1,000,000-event stream, interleaved.
    if (process.env.BENCH_SKIP_BIG !== "1") {
      const small = session.streams.get(`/bench/${run}/small`);
      const big = session.streams.get(`/bench/${run}/big`);
      for (let i = 0; i < 1_000; i += FILL_CHUNK) await small.appendBatch({ events: Array.from({ length: FILL_CHUNK }, (_, j) => event(i + j)) });
      const fillMs = await time(async () => {
        for (let i = 0; i < BIG_STREAM; i += FILL_CHUNK) await big.appendBatch({ events: Array.from({ length: FILL_CHUNK }, (_, j) => event(i + j)) });
      });
      report("stream.fill_1m_rate", BIG_STREAM / (fillMs / 1000), "events/s");
      const atSmall: number[] = [];
      const atBig: number[] = [];
      for (let i = 0; i < SINGLE_APPENDS; i++) {
        atSmall.push(await time(() => small.append(event(i))));
        atBig.push(await time(() => big.append(event(i))));
      }
      const s = summarize(atSmall);
      const b = summarize(atBig);
      report("stream.append_at_1k_events.median", s.median, "ms");
      report("stream.append_at_1k_events.p99", s.p99, "ms");
      report("stream.append_at_1m_events.median", b.median, "ms");
      report("stream.append_at_1m_events.p99", b.p99, "ms");
      report("stream.append_at_1m_vs_1k", b.median / s.median, "x (target within 1.2)");
    }
  } finally {
    session[Symbol.dispose]();
    floorRoot?.[Symbol.dispose]();
    await peer.stop();
  }
}
