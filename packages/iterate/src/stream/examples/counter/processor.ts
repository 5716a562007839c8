import { StreamProcessor, type ProcessEventArgs, type ReduceArgs } from "../../processor/index.ts";
import { COUNTER_EVENTS, CounterContract, MILESTONE_EVERY } from "./contract.ts";

type Contract = typeof CounterContract;

/**
 * Folds increments and resets into a count. When an increment crosses a multiple of
 * MILESTONE_EVERY it appends a milestone fact, keyed so that a retried event lands it once.
 *
 * @example
 * reduceProcessor(new Counter(), [{ type: "test/counter-incremented", payload: { by: 2 } }]); // { count: 2, increments: 1 }
 */
export class Counter extends StreamProcessor<Contract> {
  readonly contract = CounterContract;

  override reduce({ event, state }: ReduceArgs<Contract>) {
    if (event.type === COUNTER_EVENTS.reset) return { ...state, count: 0 };
    return { count: state.count + event.payload.by, increments: state.increments + 1 };
  }

  override async processEvent({ event, state, previousState, append }: ProcessEventArgs<Contract>) {
    if (event?.type !== COUNTER_EVENTS.incremented) return;
    const milestone = Math.floor(state.count / MILESTONE_EVERY) * MILESTONE_EVERY;
    if (milestone === 0 || previousState.count >= milestone) return;
    await append({
      type: COUNTER_EVENTS.milestoneReached,
      payload: { count: milestone },
      idempotencyKey: `counter/milestone-reached:${event.offset}`,
    });
  }
}
