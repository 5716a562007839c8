import type { AnyProcessorContract, StateOf } from "../processor/contract.ts";
import { foldEvent } from "../processor/fold.ts";
import type { StreamProcessor } from "../processor/stream-processor.ts";
import { committedEvents, type PartialEvent } from "./committed-event.ts";

/**
 * Folds events through a processor's reduce exactly as the engine would, without an engine:
 * ephemeral events, types the contract does not consume and payloads failing their schema are
 * skipped. Partial events are filled in by `committedEvents`. Answers the final state.
 *
 * @example
 * const state = reduceProcessor(new Counter(), [
 *   { type: "test/counter-incremented", payload: { by: 2 } },
 *   { type: "test/counter-incremented", payload: { by: 3 }, ephemeral: true },
 * ]);
 * // state.count === 2
 */
export function reduceProcessor<C extends AnyProcessorContract>(
  processor: StreamProcessor<C>,
  events: readonly PartialEvent[],
  options: { state?: StateOf<C> } = {},
): StateOf<C> {
  let state: unknown = options.state ?? processor.contract.initialState();
  for (const event of committedEvents(events)) {
    if (event.ephemeral === true) continue;
    const step = foldEvent(processor, state, event);
    if (step.kind === "folded") state = step.state;
  }
  return state as StateOf<C>;
}
