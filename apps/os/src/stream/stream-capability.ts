import { RpcTarget } from "cloudflare:workers";
import type { EventInput, EventSource, StreamEvent } from "iterate/types";
import { ItxError } from "iterate/errors";
import { validateGetEventsInput, validateWaitForEventInput } from "iterate/stream/events";
import { relay } from "../api/relay.ts";
import { unwrapCoded, type Coded } from "../api/coded-result.ts";
import type { AppendReceipt, AppendRequest, StreamInfo, SubscribeRequest } from "./stream-api.ts";
import type { BatchCallback } from "./live-subscribers.ts";
import { installMissingMemberError } from "../api/missing-member.ts";

type MaybePromise<T> = T | Promise<T>;

/** What a StreamCapability forwards to: the Stream Durable Object itself, or a stub of it. */
export interface StreamBackend {
  append(request: AppendRequest & { answer: "receipt" }): MaybePromise<AppendReceipt>;
  append(request: AppendRequest): MaybePromise<StreamEvent[]>;
  getEvents(input?: unknown): MaybePromise<StreamEvent[]>;
  getEventsPacked(input?: unknown): MaybePromise<string>;
  head(): MaybePromise<number>;
  getByIdempotencyKey(key: string): MaybePromise<StreamEvent | null>;
  waitForEvent(input: unknown): MaybePromise<StreamEvent>;
  subscribe(request: SubscribeRequest): MaybePromise<{ key: string; afterOffset: number; head: number }>;
  unsubscribe(key: string): MaybePromise<boolean>;
  info(): MaybePromise<StreamInfo>;
}

/** One page of `readEvents`. */
export interface EventPage {
  events: StreamEvent[];
  /** Pass as `afterOffset` to read the next page. */
  nextAfterOffset: number;
  /** True when this page reached the head that existed when it was read. */
  done: boolean;
}

/**
 * The public Stream capability: what `session.streams.get(path)` (and later `itx.streams.get`)
 * answers, and what processor hosts receive. Every write is stamped with `stamp`, fixed when the
 * capability was made; writers cannot change it.
 */
export class StreamCapability extends RpcTarget {
  readonly #backend: StreamBackend;
  readonly #stamp: EventSource;

  constructor(backend: StreamBackend, stamp: EventSource) {
    super();
    this.#backend = backend;
    this.#stamp = stamp;
  }

  async __describe() {
    const info = await relay(this.#backend.info());
    return {
      kind: "stream",
      instructions:
        "An append-only event stream. append(...events) commits events as one batch; getEvents/readEvents read them; " +
        "waitForEvent({ type, payload, afterOffset, timeoutMs }) waits for one; subscribe(callback, { afterOffset }) replays then tails.",
      children: {
        append: "append(...events): one commit, answers the stored events",
        appendBatch: "appendBatch({ events, expectedOffset? }): bulk append answering { offsets, head }; OFFSET_CONFLICT if the head moved",
        getEvents: "getEvents({ afterOffset?, beforeOffset?, types?, limit? }): at most 500 events",
        readEvents: "readEvents({ afterOffset?, limit? }): one page and where the next starts",
        waitForEvent: "waitForEvent({ type?, payload?, afterOffset?, timeoutMs }): the first match, or TIMEOUT",
        subscribe: "subscribe(callback, { key?, afterOffset?, types? }): ordered batches, then live",
      },
      ...info,
    };
  }

  async head(): Promise<number> {
    return relay(this.#backend.head());
  }

  /** Appends events as one commit. */
  async append(...events: EventInput[]): Promise<StreamEvent[]> {
    return relay(this.#backend.append({ events, stamp: this.#stamp }));
  }

  /**
   * The bulk writer's append: one commit, answered with a compact receipt (each input's offset
   * and the new head) instead of the events. `events` may be an array or, cheapest over the wire,
   * one JSON string holding that array. With `expectedOffset` it commits only if the head is still
   * there, else OFFSET_CONFLICT.
   */
  async appendBatch(input: { events: EventInput[] | string; expectedOffset?: number }): Promise<AppendReceipt> {
    if (typeof input !== "object" || input === null || (!Array.isArray(input.events) && typeof input.events !== "string")) {
      throw new ItxError("INVALID_ARGUMENT", "appendBatch takes { events: [...] or a JSON array string, expectedOffset? }");
    }
    const { events, expectedOffset, ...rest } = input;
    if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `appendBatch has no field(s) ${Object.keys(rest).join(", ")}`);
    const request: AppendRequest & { answer: "receipt" } = { events, stamp: this.#stamp, answer: "receipt" };
    if (expectedOffset !== undefined) request.expectedOffset = expectedOffset;
    return relay(this.#backend.append(request));
  }

  async getEvents(input: unknown = {}): Promise<StreamEvent[]> {
    // Checked here too: bad input is refused in the Worker, where a coded error is an ordinary
    // answer, rather than thrown out of the Durable Object, which logs it as uncaught.
    validateGetEventsInput(input);
    return relay(this.#backend.getEvents(input));
  }

  /** One page of events from `afterOffset`; loop on `nextAfterOffset` until `done`. */
  async readEvents(input: { afterOffset?: number; limit?: number } = {}): Promise<EventPage> {
    const afterOffset = input.afterOffset ?? 0;
    const limit = input.limit ?? 500;
    const [events, head] = await Promise.all([relay(this.#backend.getEvents({ afterOffset, limit })), relay(this.#backend.head())]);
    const nextAfterOffset = events.at(-1)?.offset ?? afterOffset;
    return { events, nextAfterOffset, done: nextAfterOffset >= head };
  }

  /**
   * A page of up to 10,000 events as one packed JSON string (`unpackEvents` in iterate/client turns
   * it into events): bulk readers skip per-object RPC encoding and most of the bytes.
   */
  async getEventsPacked(input: unknown = {}): Promise<string> {
    return relay(this.#backend.getEventsPacked(input));
  }

  /** The event stored under an idempotency key, or null. */
  async getByIdempotencyKey(key: unknown): Promise<StreamEvent | null> {
    if (typeof key !== "string" || key.length === 0) throw new ItxError("INVALID_ARGUMENT", "an idempotency key is a non-empty string");
    return relay(this.#backend.getByIdempotencyKey(key));
  }

  async waitForEvent(input: unknown): Promise<StreamEvent> {
    validateWaitForEventInput(input);
    return relay(this.#backend.waitForEvent(input));
  }

  /** Replays then tails; `callback` receives ordered batches. Same key replaces the earlier subscription. */
  async subscribe(
    callback: BatchCallback,
    options: { key?: string; afterOffset?: number; types?: string[] } = {},
  ): Promise<{ key: string; afterOffset: number; head: number }> {
    if (typeof options !== "object" || options === null) throw new ItxError("INVALID_ARGUMENT", "subscribe options must be an object");
    const request: SubscribeRequest = { callback };
    if (options.key !== undefined) request.key = options.key;
    if (options.afterOffset !== undefined) request.afterOffset = options.afterOffset;
    if (options.types !== undefined) request.types = options.types;
    return relay(this.#backend.subscribe(request));
  }

  async unsubscribe(key: string): Promise<boolean> {
    return relay(this.#backend.unsubscribe(key));
  }
}
installMissingMemberError(StreamCapability, "stream");


/** The Stream Durable Object's RPC surface: expected failures come back as values (see coded-result.ts). */
export interface CodedStreamBackend {
  append(request: AppendRequest): MaybePromise<Coded<StreamEvent[] | AppendReceipt>>;
  getEvents(input?: unknown): MaybePromise<Coded<StreamEvent[]>>;
  getEventsPacked(input?: unknown): MaybePromise<Coded<string>>;
  head(): MaybePromise<number>;
  getByIdempotencyKey(key: string): MaybePromise<Coded<StreamEvent | null>>;
  waitForEvent(input: unknown): MaybePromise<Coded<StreamEvent>>;
  subscribe(request: SubscribeRequest): MaybePromise<Coded<{ key: string; afterOffset: number; head: number }>>;
  unsubscribe(key: string): MaybePromise<boolean>;
  info(): MaybePromise<StreamInfo>;
}

/** A backend that throws the ItxErrors the Stream answered as values. */
export function uncodedBackend(target: CodedStreamBackend): StreamBackend {
  const backend = {
    append: async (request: AppendRequest) => unwrapCoded(await target.append(request)),
    getEvents: async (input?: unknown) => unwrapCoded(await target.getEvents(input)),
    getEventsPacked: async (input?: unknown) => unwrapCoded(await target.getEventsPacked(input)),
    head: () => target.head(),
    getByIdempotencyKey: async (key: string) => unwrapCoded(await target.getByIdempotencyKey(key)),
    waitForEvent: async (input: unknown) => unwrapCoded(await target.waitForEvent(input)),
    subscribe: async (request: SubscribeRequest) => unwrapCoded(await target.subscribe(request)),
    unsubscribe: (key: string) => target.unsubscribe(key),
    info: () => target.info(),
  };
  return backend as StreamBackend;
}

/**
 * The Stream Durable Object at `name`, as a backend that throws coded errors. (The generated RPC
 * types collapse methods whose results hold `unknown` payloads; the methods are what they say.)
 */
export function streamStub(namespace: DurableObjectNamespace<never> | DurableObjectNamespace, name: string): StreamBackend {
  return uncodedBackend(namespace.getByName(name) as unknown as CodedStreamBackend);
}

/**
 * A backend whose name needs an await to find (a project id, say): every call waits for `find`
 * first. It lets a getter answer a StreamCapability at once (Cap'n Web cannot call through a
 * getter that answers a Promise) while the lookup happens on first use.
 */
export function deferredBackend(find: () => Promise<StreamBackend>): StreamBackend {
  let found: Promise<StreamBackend> | undefined;
  const backend = () => (found ??= find());
  const deferred = {
    append: async (request: AppendRequest) => (await backend()).append(request),
    getEvents: async (input?: unknown) => (await backend()).getEvents(input),
    getEventsPacked: async (input?: unknown) => (await backend()).getEventsPacked(input),
    head: async () => (await backend()).head(),
    getByIdempotencyKey: async (key: string) => (await backend()).getByIdempotencyKey(key),
    waitForEvent: async (input: unknown) => (await backend()).waitForEvent(input),
    subscribe: async (request: SubscribeRequest) => (await backend()).subscribe(request),
    unsubscribe: async (key: string) => (await backend()).unsubscribe(key),
    info: async () => (await backend()).info(),
  };
  return deferred as StreamBackend;
}
