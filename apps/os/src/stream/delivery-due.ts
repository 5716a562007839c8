import type { StreamEvent } from "iterate/types";
import { AgentContract } from "../agent/agent-contract.ts";
import { MESSAGE_SENT } from "../agent/agent-events.ts";
import { AGENT_BINDING } from "../agent/agent-rpc-target.ts";
import { ItxContract } from "../capability-host/itx-contract.ts";
import { CAPABILITY_HOST_BINDING } from "../itx/context-lifecycle.ts";
import type { ProcessorSubscription } from "./hosted-delivery.ts";
import { currentHostBinding } from "./stream-core.ts";

// When a commit is worth a delivery to a hosted processor now. A delivery always sends everything
// after the host's cursor, in order, so one that waits loses nothing: it goes out with the next
// commit that is due, or after LIMITS.DELIVERY_HOLD_MS at the latest (ProcessorDeliveries).

/**
 * For the processors the platform itself hosts: which types must reach them at once. Anything
 * else they fold (or pass by) as well when it comes with the next of these.
 */
function urgentTypes(subscription: ProcessorSubscription): ((type: string) => boolean) | undefined {
  const binding = currentHostBinding(subscription.binding);
  // A context's capability host folds only its core types (itx-contract.ts); on an agent's stream
  // most events are the agent's own, which it would pass by.
  if (binding === CAPABILITY_HOST_BINDING && subscription.processor === ItxContract.slug) return (type) => ItxContract.isConsumed(type);
  // An agent only counts the messages its scripts send: nothing it does waits on that count, and
  // the script's settled fact follows (a turn's message and its end are one delivery).
  if (binding === AGENT_BINDING && subscription.processor === AgentContract.slug) return (type) => type !== MESSAGE_SENT && AgentContract.isConsumed(type);
  return undefined;
}

/**
 * Whether the commit of `written` should go to the processor under `key` now: unless its host
 * wrote every one of them itself and folds them as the append answers (`foldedBy`, see
 * AppendRequest), or none of them is a type it must have at once (known only for the platform's
 * own hosts: anyone else's processor gets every commit).
 */
export function deliveryDue(key: string, subscription: ProcessorSubscription, written: readonly StreamEvent[], foldedBy: string | undefined): boolean {
  if (key === foldedBy) return false;
  const urgent = urgentTypes(subscription);
  return urgent === undefined || written.some((event) => urgent(event.type));
}
