import type { EventSource, Reaction } from "iterate/types";
import type { ExpressionStep } from "./itx-contract.ts";

/** Who is calling a host, as the Worker established it at connect (never from the caller's input). */
export interface Caller {
  principal: string;
  /** The context whose code or session made the call. */
  origin: string;
  /** The connection a live capability came over; disconnecting it marks the mount disconnected. */
  connectionId?: string;
  /** Set when the calling code runs in reaction to another event (see stream/reaction.ts). */
  reaction?: Reaction;
}

export interface ProvideRequest {
  path: string[];
  instructions?: string;
  types?: string;
  capability: unknown;
  http?: unknown;
  caller: Caller;
}

export interface InvokeRequest {
  path: unknown;
  args: unknown;
  caller: Caller;
  /** How many hosts this call has passed through: bounds delegation and expression cycles. */
  depth?: number;
  /** A public HTTP request: only mounts provided with `http: { expose: true }` answer it. */
  http?: boolean;
}

/** One row of a describe inventory. */
export interface CapabilityDescription {
  path: string[];
  kind: "live" | "itx-expression" | "source" | "null" | "built-in";
  /** The context whose table holds the mount. */
  scope: string;
  instructions?: string;
  types?: string;
  /** Live mounts: whether the provider's session is still there. Durable mounts are always connected. */
  connected: boolean;
  providedAtOffset: number;
  /** Inherited mounts hidden by a mount at the same path nearer to the caller. */
  shadowed?: boolean;
}

export interface HostDescription {
  path: string;
  name: string | null;
  parent: string | null;
  ancestors: string[];
  capabilities: CapabilityDescription[];
}

/** The expression recipe a durable mount replays against its context's own itx. */
export interface ExpressionCapability {
  type: "itx-expression";
  steps: ExpressionStep[];
}

/** What a host's stream writes are stamped with. */
export function stampOf(caller: Caller): EventSource {
  return { principal: caller.principal, origin: caller.origin, ...(caller.reaction ? { reaction: caller.reaction } : {}) };
}
