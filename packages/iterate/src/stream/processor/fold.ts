import type { StreamEvent } from "../../types.ts";
import type { AnyStreamProcessor } from "./stream-processor.ts";

/** What folding one durable event into a processor's state came to. */
export type FoldStep =
  /** Not a type the contract consumes: nothing to do, but the offset still advances. */
  | { kind: "ignored" }
  /** A consumed type whose payload failed its schema: not folded, and recorded as skipped. */
  | { kind: "skipped"; issues: string[] }
  /** Folded: `event` carries the parsed payload and `state` is what reduce returned. */
  | { kind: "folded"; event: StreamEvent; state: unknown };

/**
 * Folds one event: checks it is consumed, parses its payload, and calls the processor's pure
 * reduce. The engine and `reduceProcessor` share it, so a table test folds exactly like a host.
 * A throwing reduce throws here.
 */
export function foldEvent(processor: AnyStreamProcessor, state: unknown, event: StreamEvent): FoldStep {
  const { contract } = processor;
  if (!contract.isConsumed(event.type)) return { kind: "ignored" };
  const parsed = contract.parsePayload(event);
  if (!parsed.ok) return { kind: "skipped", issues: parsed.issues };
  const parsedEvent = { ...event, payload: parsed.payload };
  return { kind: "folded", event: parsedEvent, state: processor.reduce({ event: parsedEvent, state }) };
}
