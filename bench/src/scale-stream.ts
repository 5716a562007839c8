import { connectItx, readEvents } from "iterate/client";
import { report, summarize, time } from "./stats.ts";
import type { BenchTarget } from "./target.ts";

/** Events in the big stream; BENCH_SCALE_EVENTS overrides it (a smaller figure for a quick check). */
const DEFAULT_EVENTS = 10_000_000;
const FILL_CHUNK = 500;
/** Fill appends in flight at once: the Stream still commits them one at a time, in order of arrival. */
const FILL_IN_FLIGHT = 4;
const APPENDS = 1_000;
const WARM = 50;

const event = (i: number) => ({ type: "bench/tick", payload: { i, t: "evt", v: "xxxxxxxx" } });
const chunk = (start: number, length: number) => JSON.stringify(Array.from({ length }, (_, j) => event(start + j)));

function scaleEvents(): number {
  const configured = Number(process.env.BENCH_SCALE_EVENTS ?? DEFAULT_EVENTS);
  if (!Number.isSafeInteger(configured) || configured < FILL_CHUNK) throw new Error(`BENCH_SCALE_EVENTS must be an integer >= ${FILL_CHUNK}`);
  return configured;
}

/**
 * One stream of 10,000,000 events (issue #18's scale target), run only when asked
 * (`BENCH_ONLY=scale-stream`): it fills for minutes and takes gigabytes of local state. Prints the
 * fill rate, single-event append latency on the big stream against an empty one (interleaved call
 * by call; target: within 20%), and the rate of replaying the whole stream from the start into
 * this Node process with `readEvents`.
 */
export async function measureScaleStream(target: BenchTarget): Promise<void> {
  const total = scaleEvents();
  // Node 22 does not parse `using`; dispose by hand.
  const session = connectItx({ baseUrl: target.baseUrl, auth: { type: "admin-secret", secret: target.adminSecret } });
  const run = `${Date.now()}`;
  try {
    const big = session.streams.get(`/bench/${run}/scale-big`);
    const empty = session.streams.get(`/bench/${run}/scale-empty`);
    let next = 0;
    const filler = async () => {
      while (next < total) {
        const start = next;
        const length = Math.min(FILL_CHUNK, total - start);
        next += length;
        await big.appendBatch({ events: chunk(start, length) });
      }
    };
    const fillMs = await time(() => Promise.all(Array.from({ length: FILL_IN_FLIGHT }, filler)));
    const head = await big.head();
    if (head !== total) throw new Error(`the big stream holds ${head} events, expected ${total}`);
    report(`scale.stream_events`, total, "events");
    report("scale.fill_rate", total / (fillMs / 1000), "events/s");

    for (let i = 0; i < WARM; i++) {
      await empty.append(event(i));
      await big.append(event(i));
    }
    const atEmpty: number[] = [];
    const atBig: number[] = [];
    for (let i = 0; i < APPENDS; i++) {
      // Alternate which goes first, so neither always follows the other.
      if (i % 2 === 0) {
        atEmpty.push(await time(() => empty.append(event(i))));
        atBig.push(await time(() => big.append(event(i))));
      } else {
        atBig.push(await time(() => big.append(event(i))));
        atEmpty.push(await time(() => empty.append(event(i))));
      }
    }
    const e = summarize(atEmpty);
    const b = summarize(atBig);
    report("scale.append_empty_stream.median", e.median, "ms");
    report("scale.append_empty_stream.p99", e.p99, "ms");
    report("scale.append_big_stream.median", b.median, "ms");
    report("scale.append_big_stream.p99", b.p99, "ms");
    report("scale.append_big_vs_empty", b.median / e.median, "x (target <= 1.2)");

    let read = 0;
    const replayMs = await time(async () => {
      for await (const page of readEvents(big, { pageSize: 10_000, prefetch: 2, afterOffset: 0 })) read += page.length;
    });
    // The appends above landed after the fill: the replay reads everything up to the head it found.
    if (read < total) throw new Error(`replayed ${read} events, expected at least ${total}`);
    report("scale.replay_from_start_rate", read / (replayMs / 1000), "events/s");
    report("scale.replay_from_start_seconds", replayMs / 1000, "s");
  } finally {
    session[Symbol.dispose]();
  }
}
