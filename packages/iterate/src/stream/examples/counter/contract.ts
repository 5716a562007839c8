import { z } from "zod";
import { defineProcessorContract } from "../../processor/index.ts";

/** The counter's event types. Test types: opaque to the platform, so they carry no events.iterate.com/ prefix. */
export const COUNTER_EVENTS = {
  incremented: "test/counter-incremented",
  reset: "test/counter-reset",
  milestoneReached: "test/counter-milestone-reached",
} as const;

/** Every this many, the counter lands a milestone fact. */
export const MILESTONE_EVERY = 10;

/**
 * The smallest useful contract: a count folded from increments and resets, and one fact it
 * emits when the count crosses a multiple of MILESTONE_EVERY.
 */
export const CounterContract = defineProcessorContract({
  slug: "counter",
  version: "1.0.0",
  description: "Counts increments, forgets them on reset, and announces every tenth.",
  stateSchema: z.object({
    count: z.number().int().default(0),
    /** Increments folded since the stream began, resets included; a reset does not clear it. */
    increments: z.number().int().default(0),
  }),
  events: {
    [COUNTER_EVENTS.incremented]: z.strictObject({ by: z.number().int().positive() }),
    [COUNTER_EVENTS.reset]: z.strictObject({}),
    [COUNTER_EVENTS.milestoneReached]: z.strictObject({ count: z.number().int() }),
  },
  consumes: [COUNTER_EVENTS.incremented, COUNTER_EVENTS.reset],
  emits: [COUNTER_EVENTS.milestoneReached],
});
