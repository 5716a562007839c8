import type { StreamEvent } from "iterate/types";
import { AgentContract } from "../agent/agent-contract.ts";
import { MESSAGE_SENT } from "../agent/agent-events.ts";
import { AGENT_BINDING } from "../agent/agent-rpc-target.ts";
import { ItxContract, RUN_REQUESTED, RUN_SETTLED } from "../capability-host/itx-contract.ts";
import { CAPABILITY_HOST_BINDING } from "../itx/context-lifecycle.ts";
import { ProjectContract } from "../project/project-contract.ts";
import { PROJECT_HOST_BINDING } from "../project/project-lifecycle.ts";
import type { ProcessorSubscription } from "./hosted-delivery.ts";
import { currentHostBinding } from "./stream-core.ts";

// When a commit is worth a delivery to a hosted processor now. A delivery always sends everything
// after the host's cursor, in order, so one that waits loses nothing: it goes out with the next
// commit that is due, or after LIMITS.DELIVERY_HOLD_MS at the latest (ProcessorDeliveries).

/** What a commit did beside its events, as far as whether a delivery is due goes. */
export interface CommitFacts {
  /** The subscription whose host wrote these events and folds them itself (AppendRequest's `foldedBy`). */
  foldedBy?: string | undefined;
  /**
   * Whether the commit opened or closed an enqueued run (the Stream's core counts them as the
   * capability host does). Unknown is taken as yes.
   */
  runsMoved?: boolean;
}

/**
 * For the processors the platform itself hosts: which events must reach them at once. Anything
 * else they fold (or pass by) as well when it comes with the next of these.
 */
function urgentEvents(subscription: ProcessorSubscription, facts: CommitFacts): ((event: StreamEvent) => boolean) | undefined {
  const binding = currentHostBinding(subscription.binding);
  // A context's capability host folds only its core types (itx-contract.ts). Of a script's run
  // facts it keeps only the enqueued runs: an inline run's request and settle leave its state as it
  // was, so they go with what comes next (every itx.run writes two of them).
  if (binding === CAPABILITY_HOST_BINDING && subscription.processor === ItxContract.slug) {
    const runsMoved = facts.runsMoved !== false;
    return ({ type }) => ItxContract.isConsumed(type) && (runsMoved || (type !== RUN_REQUESTED && type !== RUN_SETTLED));
  }
  // An agent only counts the messages its scripts send: nothing it does waits on that count, and
  // the script's settled fact follows (a turn's message and its end are one delivery).
  if (binding === AGENT_BINDING && subscription.processor === AgentContract.slug) return ({ type }) => type !== MESSAGE_SENT && AgentContract.isConsumed(type);
  // The Project processor acts only on what it folds (its own facts, creation, the worker's feed,
  // config commits); the rest of a root stream's traffic it passes by.
  if (binding === PROJECT_HOST_BINDING && subscription.processor === ProjectContract.slug) return ({ type }) => ProjectContract.isConsumed(type);
  return undefined;
}

/**
 * Whether the commit of `written` should go to the processor under `key` now: unless its host
 * wrote every one of them itself and folds them as the append answers (`foldedBy`), or none of
 * them is an event it must have at once (known only for the platform's own hosts: anyone else's
 * processor gets every commit).
 */
export function deliveryDue(key: string, subscription: ProcessorSubscription, written: readonly StreamEvent[], facts: CommitFacts = {}): boolean {
  if (key === facts.foldedBy) return false;
  const urgent = urgentEvents(subscription, facts);
  return urgent === undefined || written.some(urgent);
}
