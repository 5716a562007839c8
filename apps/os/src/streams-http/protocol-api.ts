import type { EventSource } from "iterate/types";
import type { BodyEvents, JsonBody } from "./message-mapping.ts";
import type { ReadFrom } from "./offsets.ts";
import type { ProducerTuple } from "./protocol-state.ts";

// The requests the Worker's /streams route sends a Stream Durable Object, and its answers. Kept
// apart from both so neither side imports the other.

/** A fork's source, as read from the source stream before the fork is created. */
export interface ForkSource {
  from: string;
  offsetParam?: string;
  subOffset?: number;
  contentType: string;
  ttlSeconds?: number;
  expiresAt?: string;
  /** The inherited events as inputs: JSON arrays that each fit one append. */
  events: string[];
}

export type ProtocolRequest =
  | {
      op: "create";
      /** undefined: the header was absent (a fork inherits its source's). */
      contentType?: string;
      ttlSeconds?: number;
      expiresAt?: string;
      closed: boolean;
      body: BodyEvents;
      stamp: EventSource;
      fork?: ForkSource;
    }
  | {
      op: "append";
      contentType?: string;
      streamSeq?: string;
      producer?: ProducerTuple;
      close: boolean;
      /** undefined: an empty body (only a close may have one). JSON mode: the decoded text, parsed by the Stream. */
      body?: BodyEvents | JsonBody;
      stamp: EventSource;
    }
  | { op: "head" }
  | { op: "read"; from: ReadFrom; offsetParam: string; live?: "long-poll" | "sse"; waitMs: number }
  | { op: "delete" }
  | { op: "fork-source"; offset?: number; subOffset?: number }
  | { op: "release" };

/** An HTTP answer the route sends on (adding CORS and security headers), or an SSE step. */
export interface ProtocolAnswer {
  status: number;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** DELETE: the source this stream was forked from, to release in turn. */
  release?: string;
  /** fork-source: what the fork inherits. */
  fork?: Omit<ForkSource, "from" | "offsetParam" | "subOffset">;
  /** SSE: the page is followed by a control event saying this. */
  sse?: { last: number; upToDate: boolean; closed: boolean; count: number };
}

export const HEADERS = {
  nextOffset: "Stream-Next-Offset",
  upToDate: "Stream-Up-To-Date",
  closed: "Stream-Closed",
  cursor: "Stream-Cursor",
  ttl: "Stream-TTL",
  expiresAt: "Stream-Expires-At",
  seq: "Stream-Seq",
  producerId: "Producer-Id",
  producerEpoch: "Producer-Epoch",
  producerSeq: "Producer-Seq",
  expectedSeq: "Producer-Expected-Seq",
  receivedSeq: "Producer-Received-Seq",
  forkedFrom: "Stream-Forked-From",
  forkOffset: "Stream-Fork-Offset",
  forkSubOffset: "Stream-Fork-Sub-Offset",
} as const;
