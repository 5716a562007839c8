import { DurableStream } from "@durable-streams/client";
import { connectItx } from "iterate/client";
import { postBatch, readAll, startDurableStreamsPeer } from "./peer/durable-streams.ts";
import { report, summarize, time, reportReadRates } from "./stats.ts";
import type { BenchTarget } from "./target.ts";

const SINGLE_APPENDS = 500;
const WARM = 50;
const BATCH = 100;
const BATCH_EVENTS = 100_000;
const READ_ROUNDS = 3;

const item = (i: number) => JSON.stringify({ i, t: "evt", v: "xxxxxxxx" });
const sum = (samples: number[]) => samples.reduce((total, value) => total + value, 0);
const batchBody = (start: number) => `[${Array.from({ length: BATCH }, (_, j) => item(start + j)).join(",")}]`;

/**
 * The Durable Streams protocol at /streams/<project> against the reference server (file-backed)
 * started in this run, the same client code on both sides: single appends with the published
 * client, sequential POSTs of 100-message batches, and reading 100,000 messages from the start
 * with the protocol's offset loop. Compared series alternate call by call.
 *
 * Our side is measured at the OS's own workerd socket when the bench started the OS (decision
 * 0025): wrangler dev's proxy in front of it is dev tooling a deployment does not have, and the
 * peer has no proxy either. The batch series is also run through that proxy, interleaved, and
 * printed as `.via_wrangler_proxy`, so what the proxy costs stays visible.
 */
export async function measureDurableStreamsHttp(target: BenchTarget): Promise<void> {
  // oxlint-disable-next-line typescript/no-explicit-any -- a Cap'n Web session is dynamic
  const session: any = connectItx({ baseUrl: target.baseUrl, auth: { type: "admin-secret", secret: target.adminSecret } });
  const peer = await startDurableStreamsPeer();
  try {
    const slug = `bench-dshttp-${Date.now().toString(36)}`;
    await session.projects.create({ slug }).whoami();
    const { token } = await session.issueToken({ principal: "bench", projectIds: [slug], ttlSeconds: 3600 });
    const headers = { authorization: `Bearer ${token}` };
    const direct = target.workerdUrl !== undefined;
    console.log(`dshttp: the OS is measured at ${direct ? "its own workerd socket (decision 0025)" : "wrangler dev's public port"}`);
    const base = `${target.workerdUrl ?? target.baseUrl}/streams/${slug}`;
    const create = (name: string) => DurableStream.create({ url: `${base}/${name}`, contentType: "application/json", headers });

    // Single appends with the published client, ours and the peer's alternating.
    const ours = await create("single");
    const theirs = await peer.create("single");
    for (let i = 0; i < WARM; i++) {
      await ours.append(item(i));
      await theirs.append(item(i));
    }
    const mine: number[] = [];
    const peers: number[] = [];
    for (let i = 0; i < SINGLE_APPENDS; i++) {
      const first = i % 2 === 0;
      if (first) mine.push(await time(() => ours.append(item(i))));
      peers.push(await time(() => theirs.append(item(i))));
      if (!first) mine.push(await time(() => ours.append(item(i))));
    }
    const m = summarize(mine);
    const p = summarize(peers);
    report("dshttp.single_append.median", m.median, "ms");
    report("dshttp.single_append.p99", m.p99, "ms");
    report("dshttp.single_append.peer_durable_streams_file.median", p.median, "ms");
    report("dshttp.single_append.peer_durable_streams_file.p99", p.p99, "ms");
    report("dshttp.single_append.ratio_to_peer", m.median / p.median, "x (target <= 1.5)");

    // Sequential POSTs of 100-message batches.
    const batched = await create("batches");
    const peerBatched = await peer.create("batches");
    // The same stream through wrangler dev's public port (only when the series above bypasses it).
    const proxied = direct ? `${target.baseUrl}/streams/${slug}/batches-proxied` : undefined;
    if (proxied) await DurableStream.create({ url: proxied, contentType: "application/json", headers });
    const ourPosts: number[] = [];
    const peerPosts: number[] = [];
    const proxiedPosts: number[] = [];
    for (let i = 0; i < BATCH_EVENTS; i += BATCH) {
      const body = batchBody(i);
      const turns = [
        async () => ourPosts.push(await time(() => postBatch(batched.url, body, headers))),
        async () => peerPosts.push(await time(() => postBatch(peerBatched.url, body))),
        ...(proxied ? [async () => proxiedPosts.push(await time(() => postBatch(proxied, body, headers)))] : []),
      ];
      // Rotate the order each round, so no series always follows another.
      const round = i / BATCH;
      for (let k = 0; k < turns.length; k++) await (turns[(round + k) % turns.length] as () => Promise<number>)();
    }
    const rate = BATCH_EVENTS / (sum(ourPosts) / 1000);
    const peerRate = BATCH_EVENTS / (sum(peerPosts) / 1000);
    const posts = summarize(ourPosts);
    const peerPostsSummary = summarize(peerPosts);
    report("dshttp.batch_100_append_rate", rate, "events/s");
    report("dshttp.batch_100_append_rate.peer_durable_streams_file", peerRate, "events/s");
    report("dshttp.batch_100_append_rate.ratio_to_peer", rate / peerRate, "x (target >= 1, #18: >= 1.5)");
    report("dshttp.batch_100_post.median", posts.median, "ms");
    report("dshttp.batch_100_post.p99", posts.p99, "ms");
    report("dshttp.batch_100_post.peer_durable_streams_file.median", peerPostsSummary.median, "ms");
    report("dshttp.batch_100_post.peer_durable_streams_file.p99", peerPostsSummary.p99, "ms");
    if (proxiedPosts.length > 0) {
      const proxiedRate = BATCH_EVENTS / (sum(proxiedPosts) / 1000);
      const proxiedSummary = summarize(proxiedPosts);
      report("dshttp.batch_100_append_rate.via_wrangler_proxy", proxiedRate, "events/s");
      report("dshttp.batch_100_append_rate.via_wrangler_proxy.ratio_to_peer", proxiedRate / peerRate, "x (informative: wrangler dev's proxy in front)");
      report("dshttp.batch_100_post.via_wrangler_proxy.median", proxiedSummary.median, "ms");
      report("dshttp.batch_100_post.via_wrangler_proxy.p99", proxiedSummary.p99, "ms");
    }

    // Reading the 100,000 messages from the start, alternating.
    const ourReads: number[] = [];
    const peerReads: number[] = [];
    for (let round = 0; round < READ_ROUNDS; round++) {
      let read = 0;
      ourReads.push(await time(async () => (read = await readAll(batched.url, headers))));
      if (read !== BATCH_EVENTS) throw new Error(`read ${read} messages, expected ${BATCH_EVENTS}`);
      let peerRead = 0;
      peerReads.push(await time(async () => (peerRead = await readAll(peerBatched.url))));
      if (peerRead !== BATCH_EVENTS) throw new Error(`peer read ${peerRead} messages, expected ${BATCH_EVENTS}`);
    }
    // Three rounds: the slowest stands for the tail.
    reportReadRates("dshttp.read_100k_from_start", BATCH_EVENTS, ourReads, peerReads, "target >= 0.5, #18: >= 1");
  } finally {
    session[Symbol.dispose]();
    await peer.stop();
  }
}
