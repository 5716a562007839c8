import { DurableStream } from "@durable-streams/client";
import { connectItx } from "iterate/client";
import { postBatch, readAll, startDurableStreamsPeer } from "./peer/durable-streams.ts";
import { interleave, report, summarize, time, reportReadRates } from "./stats.ts";
import { measuredAt, type BenchTarget } from "./target.ts";

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
 * Our side is measured at a socket serving the OS Worker itself when the bench started the OS
 * (decision 0027), else at the OS's own workerd socket (decision 0025): wrangler dev's proxy, and
 * Miniflare's entry worker and assets router behind it, are local plumbing a deployment does not
 * have, and the peer has none either. The batch series is also run through each layer of that
 * plumbing the run has, interleaved, and printed as `.via_miniflare_entry` (the workerd socket)
 * and `.via_wrangler_proxy` (the public port), so what each costs stays visible.
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
    const at = measuredAt(target);
    console.log(`dshttp: the OS is measured at ${at.description}`);
    const base = `${at.url}/streams/${slug}`;
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
    // Streams of the same project through each layer of plumbing the series above bypasses.
    const layers = at.bypassed.map((layer) => ({ ...layer, stream: `${layer.url}/streams/${slug}/batches-${layer.name}` }));
    for (const layer of layers) await DurableStream.create({ url: layer.stream, contentType: "application/json", headers });
    // Each series posts the same sequence of bodies; the order of the series is shuffled each
    // round (a fixed rotation keeps each series behind the same neighbour, and the peer keeps its
    // disk busy for a moment after it answers).
    const posted = new Map<string, number>();
    const poster = (series: string, url: string, postHeaders: Record<string, string> = {}) => async () => {
      const start = posted.get(series) ?? 0;
      posted.set(series, start + BATCH);
      await postBatch(url, batchBody(start), postHeaders);
    };
    const series: Record<string, () => Promise<void>> = {
      ours: poster("ours", batched.url, headers),
      peer: poster("peer", peerBatched.url),
      ...Object.fromEntries(layers.map((layer) => [layer.name, poster(layer.name, layer.stream, headers)])),
    };
    const samples = await interleave(BATCH_EVENTS / BATCH, series);
    const ourPosts = samples.ours ?? [];
    const peerPosts = samples.peer ?? [];
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
    for (const layer of layers) {
      const layerPosts = samples[layer.name] ?? [];
      const layerRate = BATCH_EVENTS / (sum(layerPosts) / 1000);
      const layerSummary = summarize(layerPosts);
      report(`dshttp.batch_100_append_rate.via_${layer.name}`, layerRate, "events/s");
      report(`dshttp.batch_100_append_rate.via_${layer.name}.ratio_to_peer`, layerRate / peerRate, `x (informative: ${layer.inFront} in front)`);
      report(`dshttp.batch_100_post.via_${layer.name}.median`, layerSummary.median, "ms");
      report(`dshttp.batch_100_post.via_${layer.name}.p99`, layerSummary.p99, "ms");
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
