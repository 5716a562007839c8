import type { StreamEvent } from "iterate/types";
import { ItxContract } from "../capability-host/itx-contract.ts";
import { CAPABILITY_HOST_BINDING } from "../itx/context-lifecycle.ts";
import type { ProcessorSubscription } from "./hosted-delivery.ts";
import { currentHostBinding } from "./stream-core.ts";

// When a commit is worth a delivery to a hosted processor now. A delivery always sends everything
// after the host's cursor, in order, so one that waits loses nothing: it goes out with the next
// commit that is due, or after LIMITS.DELIVERY_HOLD_MS at the latest (ProcessorDeliveries).

/** What each processor the platform itself hosts folds, by binding and slug. */
function foldedTypes(subscription: ProcessorSubscription): ((type: string) => boolean) | undefined {
  // A context's capability host folds only its core types (itx-contract.ts); on an agent's stream
  // most events are the agent's own, which it would pass by.
  if (currentHostBinding(subscription.binding) === CAPABILITY_HOST_BINDING && subscription.processor === ItxContract.slug) return (type) => ItxContract.isConsumed(type);
  return undefined;
}

/**
 * Whether the commit of `written` should go to the processor under `key` now: unless its host
 * wrote every one of them itself and folds them as the append answers (`foldedBy`, see
 * AppendRequest), or none of them is a type it folds (known only for the platform's own hosts:
 * anyone else's processor gets every commit).
 */
export function deliveryDue(key: string, subscription: ProcessorSubscription, written: readonly StreamEvent[], foldedBy: string | undefined): boolean {
  if (key === foldedBy) return false;
  const folds = foldedTypes(subscription);
  return folds === undefined || written.some((event) => folds(event.type));
}
