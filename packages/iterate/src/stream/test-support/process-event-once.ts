import type { EventInput, StreamEvent } from "../../types.ts";
import type { AnyProcessorContract, StateOf } from "../processor/contract.ts";
import { stampEmitted } from "../processor/emit.ts";
import type { EngineClock } from "../processor/host.ts";
import type { AnyStreamProcessor, BackgroundStart, ProcessEventInput, StreamProcessor } from "../processor/stream-processor.ts";
import { committedEvent, type PartialEvent } from "./committed-event.ts";
import { fakeClock } from "./fake-clock.ts";

/** What one call of processEvent did. */
export interface ProcessEventRecord<C extends AnyProcessorContract> {
  /** Everything appended, by processEvent, by what it blocked on, and by background work run so far. */
  readonly appended: EventInput[];
  /** The keys runInBackground was asked for, in order. */
  readonly background: string[];
  /** Runs the background work asked for so far, once each and in order; `state` is what it reads as the committed state. */
  runBackground(state?: StateOf<C>): Promise<void>;
}

export interface ProcessEventOnceInput<C extends AnyProcessorContract> {
  /** The event, already folded into `state`; leave it out (or null) for the at-head pass. */
  event?: PartialEvent | null;
  state?: StateOf<C>;
  /** Defaults to `state`. */
  previousState?: StateOf<C>;
  /** Defaults to true. */
  caughtUp?: boolean;
  clock?: EngineClock;
}

/**
 * Calls a processor's processEvent once, with no engine and no stream, and records what it did.
 * Appends are checked against the contract like the engine checks them. For the "states through
 * processEvent" rows of a table test.
 *
 * @example
 * const record = await processEventOnce(new Greeter(mailer), { state: runningState });
 * record.background; // ["greeter/run:1"]
 * await record.runBackground();
 * record.appended.map((input) => input.type); // the facts the driver landed
 */
export async function processEventOnce<C extends AnyProcessorContract>(
  processor: StreamProcessor<C>,
  input: ProcessEventOnceInput<C> = {},
): Promise<ProcessEventRecord<C>> {
  const clock = input.clock ?? fakeClock();
  const state: unknown = input.state ?? processor.contract.initialState();
  const appended: EventInput[] = [];
  const work: { key: string; run: (state: unknown) => Promise<void> }[] = [];
  let ran = 0;
  let offset = 1_000;
  const append = async (inputs: readonly EventInput[]): Promise<StreamEvent[]> => {
    const stamped = stampEmitted(processor.contract, inputs);
    appended.push(...stamped);
    return stamped.map((event) => committedEvent(event, ++offset));
  };
  const blockers: Promise<unknown>[] = [];
  const args: ProcessEventInput<unknown, StreamEvent, EventInput> = {
    event: input.event ? parsedEvent(processor, committedEvent(input.event)) : null,
    state,
    previousState: input.previousState ?? state,
    delivery: { caughtUp: input.caughtUp ?? true },
    now: () => clock.now(),
    append: (...inputs) => append(inputs),
    blockProcessorWhile: (promise) => void blockers.push(promise),
    runInBackground: async (key, run): Promise<BackgroundStart> => {
      if (work.some((item) => item.key === key)) return "running";
      work.push({ key, run: (current) => run({ state: () => current, append: (...inputs) => append(inputs), now: () => clock.now(), attempt: 1 }) });
      return "started";
    },
  };
  const hosted: AnyStreamProcessor = processor;
  await hosted.processEvent?.(args);
  await Promise.all(blockers);
  return {
    appended,
    get background() {
      return work.map((item) => item.key);
    },
    async runBackground(current?: StateOf<C>) {
      for (; ran < work.length; ran++) await work[ran]?.run(current ?? state);
    },
  };
}

function parsedEvent<C extends AnyProcessorContract>(processor: StreamProcessor<C>, event: StreamEvent): StreamEvent {
  const parsed = processor.contract.parsePayload(event);
  if (!parsed.ok) throw new Error(`processEventOnce: the payload of ${event.type} fails its schema: ${parsed.issues.join("; ")}`);
  return { ...event, payload: parsed.payload };
}
