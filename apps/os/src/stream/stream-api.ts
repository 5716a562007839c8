import type { EventSource } from "iterate/types";
import type { HostedDelivery } from "./hosted-delivery.ts";
import type { BatchCallback } from "./live-subscribers.ts";

// The Stream Durable Object's request and answer shapes, apart from the object itself, so that
// its callers (the capability, the stub helpers) depend on these and not on the Durable Object.

export interface AppendRequest {
  /** The inputs, or one JSON string holding the array (parsed here, inside the size limit). */
  events: unknown[] | string;
  expectedOffset?: number;
  /** "events" (default) answers the stored events; "receipt" only their offsets, for bulk writers. */
  answer?: "events" | "receipt";
  /**
   * The writer appends again shortly (an inline run's request, before its settled fact): hosted
   * processors receive these events with that next append, or after LIMITS.DELIVERY_HOLD_MS at the
   * latest, so the pair costs them one delivery instead of two. Waiters and live subscribers are
   * not held.
   */
  holdDelivery?: boolean;
  /**
   * The key of the subscription whose host is the writer and folds these events itself as the
   * append answers (a host's read-your-writes): its delivery of them waits for the next commit
   * due to it, or LIMITS.DELIVERY_HOLD_MS, instead of sending it what it already has. Set by the
   * host's own code, never by a writer through the Stream capability.
   */
  foldedBy?: string;
  /** Trusted: set by the Worker or host that holds this stub, never by the writer. */
  stamp: EventSource;
}

export interface SubscribeRequest {
  key?: string;
  afterOffset?: number;
  types?: string[];
  callback: BatchCallback;
}

export interface StreamInfo {
  projectId: string;
  path: string;
  head: number;
  liveSubscribers: number;
  processors: ReturnType<HostedDelivery["status"]>[];
}
