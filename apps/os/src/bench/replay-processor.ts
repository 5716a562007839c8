import { z } from "zod";
import { StreamProcessor, defineProcessorContract, type ReduceArgs } from "iterate/stream/processor";

/** The processor the replay benchmark folds: a count and a running sum, the smallest real fold. */
export const ReplayContract = defineProcessorContract({
  slug: "bench-replay",
  version: "1.0.0",
  description: "Counts bench/tick events and sums their i.",
  stateSchema: z.object({ count: z.number().default(0), sum: z.number().default(0) }),
  events: { "bench/tick": z.object({ i: z.number() }).loose() },
  consumes: ["bench/tick"],
  emits: [],
});

export class ReplayProcessor extends StreamProcessor<typeof ReplayContract> {
  readonly contract = ReplayContract;

  override reduce({ event, state }: ReduceArgs<typeof ReplayContract>) {
    return { count: state.count + 1, sum: state.sum + event.payload.i };
  }
}
