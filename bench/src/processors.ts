import { z } from "zod";
import { StreamProcessor, defineProcessorContract, type ReduceArgs } from "iterate/stream/processor";
import { reduceProcessor } from "iterate/stream/test-support";
import { report, time } from "./stats.ts";
import type { BenchTarget } from "./target.ts";

const REDUCE_EVENTS = 1_000_000;
const REPLAY_EVENTS = 100_000;

const TickContract = defineProcessorContract({
  slug: "bench-ticks",
  version: "1.0.0",
  description: "Counts ticks.",
  stateSchema: z.object({ count: z.number().default(0), sum: z.number().default(0) }),
  events: { "bench/tick": z.object({ i: z.number() }) },
  consumes: ["bench/tick"],
  emits: [],
});

class Ticks extends StreamProcessor<typeof TickContract> {
  readonly contract = TickContract;
  override reduce({ event, state }: ReduceArgs<typeof TickContract>) {
    return { count: state.count + 1, sum: state.sum + event.payload.i };
  }
}

/** Folding speed: reduceProcessor in Node, and a replay from SQLite inside a Durable Object. */
export async function measureProcessors(target: BenchTarget): Promise<void> {
  const events = Array.from({ length: REDUCE_EVENTS }, (_, i) => ({ type: "bench/tick", payload: { i } }));
  let state = { count: 0, sum: 0 };
  const reduceMs = await time(async () => (state = reduceProcessor(new Ticks(), events)));
  if (state.count !== REDUCE_EVENTS) throw new Error(`reduced ${state.count} events`);
  report("processor.reduce_processor_1m_rate", REDUCE_EVENTS / (reduceMs / 1000), "events/s");

  const name = `replay-${Date.now()}`;
  await target.bench.fillJournal(name, REPLAY_EVENTS);
  const rates: number[] = [];
  for (let round = 0; round < 3; round++) {
    let replayed = { offset: 0, count: 0 };
    const ms = await time(async () => (replayed = await target.bench.replayJournal(name)));
    if (replayed.count !== REPLAY_EVENTS) throw new Error(`replayed ${replayed.count} events`);
    rates.push(REPLAY_EVENTS / (ms / 1000));
  }
  report("processor.replay_100k_in_do_rate", rates.toSorted((a, b) => a - b)[1] ?? 0, "events/s (target >= 500000)");
}
