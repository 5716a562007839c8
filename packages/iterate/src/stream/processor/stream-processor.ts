import type { EventInput, StreamEvent } from "../../types.ts";
import type { AnyProcessorContract, ConsumedEvent, EmittedInput, StateOf } from "./contract.ts";

// The argument shapes take (State, Event, Emitted) rather than a contract, so that TypeScript sees
// them as covariant and a processor of any contract fits where the engine holds `AnyStreamProcessor`.

/** What `reduce` is given: one consumed event, its payload parsed, and the state before it. */
export interface ReduceInput<State, Event> {
  event: Event;
  state: State;
}

/** What background work is handed when it starts. */
export interface BackgroundInput<State, Emitted> {
  /** The processor's newest folded state at the time of the call, not when the work was asked for. */
  state(): State;
  /** Appends events the contract emits, stamped with `source.processor`; one call is one commit. */
  append(...events: Emitted[]): Promise<StreamEvent[]>;
  now(): number;
  /**
   * Which start of this work this is under its claim: 1 the first time; more when every earlier
   * start died with its host before it settled. Work that must not run twice (a script that may
   * have hung the host) settles itself failed instead of starting again.
   */
  attempt: number;
}

/** How `runInBackground` answered. */
export type BackgroundStart =
  /** Claimed and started now. */
  | "started"
  /** Claimed; starts when its backoff after an earlier death ends. */
  | "scheduled"
  /** Work under this key is already live in this host; nothing new started. */
  | "running"
  /** This key died too many times; the engine will not start it again. */
  | "given-up";

/** What `processEvent` is given. */
export interface ProcessEventInput<State, Event, Emitted> {
  /** The event just reduced, or `null` for the pass the engine makes once a batch reaches the head. */
  event: Event | null;
  /** The state after reducing `event`. */
  state: State;
  /** The state before it; the same object as `state` for the at-head pass and for ephemeral events. */
  previousState: State;
  /** Appends events the contract emits, stamped with `source.processor`; one call is one commit. */
  append(...events: Emitted[]): Promise<StreamEvent[]>;
  /** Holds the processor's chain: the next event waits until `promise` settles, and a rejection fails this one. */
  blockProcessorWhile(promise: Promise<unknown>): void;
  /**
   * Starts work that outlives this event under a claim recorded in storage first, so that the
   * work is revived if the host dies. A key already live in this host is not started twice.
   */
  runInBackground(key: string, work: (input: BackgroundInput<State, Emitted>) => Promise<void>): Promise<BackgroundStart>;
  delivery: {
    /** True when this event is at the stream's head (always true for the at-head pass). */
    caughtUp: boolean;
  };
  /** The engine clock, so that tests can fake time. */
  now(): number;
}

/** `reduce`'s argument for a contract. */
export type ReduceArgs<C extends AnyProcessorContract> = ReduceInput<StateOf<C>, ConsumedEvent<C>>;
/** `processEvent`'s argument for a contract. */
export type ProcessEventArgs<C extends AnyProcessorContract> = ProcessEventInput<StateOf<C>, ConsumedEvent<C>, EmittedInput<C>>;
/** What a contract's background work is handed. */
export type BackgroundContext<C extends AnyProcessorContract> = BackgroundInput<StateOf<C>, EmittedInput<C>>;

/**
 * A processor: a contract, a pure `reduce`, and optional side effects in `processEvent`. The
 * engine folds each consumed event exactly once into the state it checkpoints, then calls
 * `processEvent` with the state before and after.
 *
 * @example
 * class Counter extends StreamProcessor<typeof CounterContract> {
 *   readonly contract = CounterContract;
 *   override reduce({ event, state }: ReduceArgs<typeof CounterContract>) {
 *     return { count: state.count + event.payload.by };
 *   }
 * }
 */
export abstract class StreamProcessor<C extends AnyProcessorContract = AnyProcessorContract> {
  abstract readonly contract: C;

  /** Folds one event into the state. Pure: no I/O, no clock, no randomness; it is replayed on every rebuild. */
  reduce(args: ReduceArgs<C>): StateOf<C> {
    return args.state;
  }

  /** Side effects for one event, or for the at-head pass (`event: null`). Never called during a replay. */
  processEvent?(args: ProcessEventArgs<C>): void | Promise<void>;
}

/** A processor of any contract, as the engine holds it. */
export interface AnyStreamProcessor {
  readonly contract: AnyProcessorContract;
  reduce(args: ReduceInput<unknown, StreamEvent>): unknown;
  processEvent?(args: ProcessEventInput<unknown, StreamEvent, EventInput>): void | Promise<void>;
}
