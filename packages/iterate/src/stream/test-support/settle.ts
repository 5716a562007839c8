import type { ProcessorEngine } from "../processor/engine.ts";
import type { ProcessorOutcome } from "../processor/processor-runner.ts";
import type { MemoryStream } from "./memory-stream.ts";

/**
 * Resolves once the engine has nothing left to do: every chain drained and every background task
 * settled, including work they started in turn. With a real clock, backoffs make it wait for real.
 *
 * @example
 * await stream.append({ type: "test/counter-incremented", payload: { by: 1 } });
 * await settle(engine);
 * (await engine.snapshot("counter")).state; // { count: 1 }
 */
export async function settle(engine: ProcessorEngine): Promise<void> {
  do {
    await engine.chainsIdle();
    await engine.backgroundIdle();
    // Let deliveries that callbacks queue in this turn reach their chains before looking again.
    await new Promise((resolve) => setTimeout(resolve, 0));
  } while (!engine.isIdle());
}

/** A live feed from a memory stream into an engine, as a host's subscription would be. */
export interface EngineConnection {
  /** Every outcome the engine answered a delivery with, in order. */
  readonly outcomes: readonly ProcessorOutcome[];
  /** The failed ones. */
  failures(): ProcessorOutcome[];
  /** Stops the feed, as a host's death would. */
  disconnect(): void;
}

/**
 * Delivers every batch the stream commits to the engine, and keeps the outcomes.
 *
 * @example
 * const connection = connectEngine(stream, engine);
 * await engine.start();
 * // ... append, settle, assert
 * expect(connection.failures()).toEqual([]);
 */
export function connectEngine(stream: MemoryStream, engine: ProcessorEngine): EngineConnection {
  const outcomes: ProcessorOutcome[] = [];
  const unsubscribe = stream.subscribe((events) => {
    void engine.deliver(events).then((results) => outcomes.push(...results));
  });
  return {
    outcomes,
    failures: () => outcomes.filter((outcome) => outcome.status === "failed"),
    disconnect: unsubscribe,
  };
}
