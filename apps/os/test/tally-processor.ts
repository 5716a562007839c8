import { z } from "zod";
import { StreamProcessorDurableObject } from "iterate/sdk";
import { StreamProcessor, defineProcessorContract, type ProcessEventArgs, type ReduceArgs } from "iterate/stream/processor";
import { StreamRpcTarget, streamStub } from "../src/stream/stream-rpc-target.ts";

// A test-only processor (its events live under test/): it counts tallies and, every fifth one,
// appends a milestone fact keyed by the triggering offset, so redelivery cannot land it twice.
export const TallyContract = defineProcessorContract({
  slug: "tally",
  version: "1.0.0",
  description: "Counts test/tally-added events and lands test/tally-milestone-reached every fifth.",
  stateSchema: z.object({ count: z.number().int().default(0), offsets: z.array(z.number()).default([]) }),
  events: {
    "test/tally-added": z.strictObject({ n: z.number().int().optional() }),
    "test/tally-milestone-reached": z.strictObject({ count: z.number().int() }),
  },
  consumes: ["test/tally-added"],
  emits: ["test/tally-milestone-reached"],
});

export class Tally extends StreamProcessor<typeof TallyContract> {
  readonly contract = TallyContract;

  override reduce({ event, state }: ReduceArgs<typeof TallyContract>) {
    return { count: state.count + 1, offsets: [...state.offsets, event.offset] };
  }

  override async processEvent({ event, state, append }: ProcessEventArgs<typeof TallyContract>): Promise<void> {
    if (event && state.count % 5 === 0) {
      await append({
        type: "test/tally-milestone-reached",
        payload: { count: state.count },
        idempotencyKey: `tally/milestone-reached:${event.offset}`,
      });
    }
  }
}

/**
 * Hosts the tally processor; bound in workerd tests as TEST_PROCESSORS. Like the platform's hosts it
 * can open its own stream, so a stream may release its idle session; `hold(true)` makes it refuse.
 */
export class TallyProcessorHost extends StreamProcessorDurableObject<Env> {
  readonly processor = new Tally();
  #held = false;

  hold(held: boolean): void {
    this.#held = held;
  }

  protected override openStream(): StreamRpcTarget {
    return new StreamRpcTarget(streamStub(this.env.STREAM, String(this.ctx.id.name)), { platform: "processor-host:tally" });
  }

  protected override mayRelease(): boolean {
    return !this.#held;
  }
}
