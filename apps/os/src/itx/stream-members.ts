import { RpcTarget } from "cloudflare:workers";
import type { EventInput, EventPage, StreamEvent } from "iterate/types";
import { parseStreamPath } from "../stream/coordinate.ts";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import { resolveProjectId, stampOfScope, type HandleContext, type HandleScope } from "./handle-scope.ts";

// The handle's stream members: its own context's stream, and `itx.streams` for any stream of the
// project. Every write is stamped with the handle's scope (origin, principal, reaction).

/** Appends to this context's own stream as one commit. */
export async function append(ctx: HandleContext, ...events: EventInput[]): Promise<StreamEvent[]> {
  return (await ctx.stream()).append(...events);
}

export async function getEvents(ctx: HandleContext, input: unknown = {}): Promise<StreamEvent[]> {
  return (await ctx.stream()).getEvents(input);
}

export async function readEvents(ctx: HandleContext, input: { afterOffset?: number; limit?: number } = {}): Promise<EventPage> {
  return (await ctx.stream()).readEvents(input);
}

export async function waitForEvent(ctx: HandleContext, input: unknown): Promise<StreamEvent> {
  return (await ctx.stream()).waitForEvent(input);
}

/** `itx.streams`: the streams of this handle's project, written with this handle's origin. */
export class ProjectStreamsRpcTarget extends RpcTarget {
  readonly #scope: HandleScope;

  constructor(scope: HandleScope) {
    super();
    this.#scope = scope;
  }

  async get(path: unknown): Promise<StreamRpcTarget> {
    const streamPath = parseStreamPath(path);
    const projectId = await resolveProjectId(this.#scope);
    return new StreamRpcTarget(streamStub(this.#scope.env.STREAM, `${projectId}:${streamPath}`), stampOfScope(this.#scope));
  }
}
