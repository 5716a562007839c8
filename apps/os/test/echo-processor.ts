import { z } from "zod";
import { StreamProcessorDurableObject } from "iterate/sdk";
import { StreamProcessor, defineProcessorContract, type ProcessEventArgs, type ReduceArgs } from "iterate/stream/processor";

// A test-only runaway: it appends one more of exactly what it handles, forever, unless the
// platform stops the chain.
export const EchoContract = defineProcessorContract({
  slug: "echo",
  version: "1.0.0",
  description: "Answers every test/echo-sent with another one.",
  stateSchema: z.object({ handled: z.number().int().default(0) }),
  events: { "test/echo-sent": z.strictObject({ n: z.number().int() }) },
  consumes: ["test/echo-sent"],
  emits: ["test/echo-sent"],
});

export class Echo extends StreamProcessor<typeof EchoContract> {
  readonly contract = EchoContract;

  override reduce({ state }: ReduceArgs<typeof EchoContract>) {
    return { handled: state.handled + 1 };
  }

  override async processEvent({ event, append }: ProcessEventArgs<typeof EchoContract>): Promise<void> {
    if (event) await append({ type: "test/echo-sent", payload: { n: event.payload.n + 1 }, idempotencyKey: `echo:${event.offset}` });
  }
}

/** Hosts the echo processor; bound in workerd tests as ECHO_PROCESSORS. */
export class EchoProcessorHost extends StreamProcessorDurableObject {
  readonly processor = new Echo();
}
