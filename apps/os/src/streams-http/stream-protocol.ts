import type { EventSource } from "iterate/types";
import { STREAM_LIMITS } from "iterate/stream/events";
import { LIMITS } from "../limits.ts";
import { HEADERS as H, type ProtocolAnswer, type ProtocolRequest } from "./protocol-api.ts";
import { BYTES_APPENDED, MESSAGE_APPENDED, base64, bytesOfPayload, checkedEventsOfJson, isJsonMode, mediaType, type BodyEvents, type BytesPayload } from "./message-mapping.ts";
import { formatOffset } from "./offsets.ts";
import { eventInputsBetween, readPage } from "./protocol-page.ts";
import { ProtocolTables, checkProducer, isExpired, type ProducerTuple, type ProtocolMeta } from "./protocol-state.ts";

/** What the protocol needs from its Stream Durable Object. */
export interface ProtocolHost {
  readonly sql: SqlStorage;
  readonly path: string;
  head(): number;
  /**
   * Appends each JSON array of event inputs through the Stream's normal path (write authority,
   * limits, stamping), all or none; throws coded errors.
   */
  append(chunks: Extract<BodyEvents, { chunks: unknown }>["chunks"], stamp: EventSource): void;
  /** Deletes every event; throws PERMISSION_DENIED when the stream feeds processors or holds platform facts. */
  clear(): void;
  /** Whether `clear` would delete: the stream feeds no processor and holds no platform fact. */
  erasable(): boolean;
}

const DEFAULT_CONTENT_TYPE = "application/octet-stream";
/** A stream no PUT created (a context's stream, a Cap'n Web writer's) reads as JSON. */
const IMPLICIT_CONTENT_TYPE = "application/json";

const answer = (status: number, headers: Record<string, string> = {}, body?: string | Uint8Array): ProtocolAnswer =>
  body === undefined ? { status, headers } : { status, headers, body };

/**
 * The Durable Streams protocol inside one Stream Durable Object: creation, appends with producer
 * fencing and Stream-Seq, closing, reads, long-poll waits, deletion and forks. Every method runs
 * in one turn of the object up to its only await (a long-poll wait), so each check and the write
 * it guards are atomic.
 */
export class StreamProtocol {
  readonly #host: ProtocolHost;
  readonly #tables: ProtocolTables;
  #waiters = new Set<() => void>();

  constructor(host: ProtocolHost) {
    this.#host = host;
    this.#tables = new ProtocolTables(host.sql);
  }

  /** Wakes long-polls and SSE readers: something was appended, closed or deleted. */
  notify(): void {
    const waiters = this.#waiters;
    this.#waiters = new Set();
    for (const wake of waiters) wake();
  }

  async handle(request: ProtocolRequest): Promise<ProtocolAnswer> {
    const now = Date.now();
    const meta = this.#current(now);
    switch (request.op) {
      case "create":
        return this.#create(request, meta, now);
      case "fork-source":
        return this.#forkSource(request, meta);
      case "release":
        return this.#release(meta);
    }
    if (!meta) return answer(404, {}, "Stream not found");
    if (meta.gone) return answer(410, {}, "Stream is gone");
    switch (request.op) {
      case "append":
        return this.#append(request, meta, now);
      case "head":
        return answer(200, { ...this.#describe(meta), "cache-control": "no-store", etag: this.#etag("-1", this.#host.head(), meta.closed) });
      case "read":
        this.#tables.touch(now);
        return this.#read(request, meta);
      case "delete":
        return this.#delete(meta);
    }
  }

  /** The stream's protocol state, or undefined when it does not exist (an expired one is deleted first). */
  #current(now: number): ProtocolMeta | undefined {
    const meta = this.#tables.meta;
    if (meta && !meta.gone && isExpired(meta, now) && meta.createdOverHttp) {
      // A processor reads it or the platform wrote to it since the PUT: it is no longer the
      // protocol's to expire, so it stays, without its TTL (see `#delete`).
      if (!this.#host.erasable()) {
        const { ttlSeconds: _ttl, expiresAt: _at, ...kept } = meta;
        this.#tables.saveMeta(kept);
        return kept;
      }
      if (meta.forkRefs > 0) this.#tables.saveMeta({ ...meta, gone: true });
      else this.#erase();
      return this.#tables.meta;
    }
    if (meta) {
      if (!meta.closed || meta.createdOverHttp) return meta;
      // Closed over HTTP by an OS that allowed it: a stream no PUT created is open (see #append).
      const { closedBy: _closedBy, ...open } = meta;
      return { ...open, closed: false };
    }
    if (this.#host.head() === 0) return undefined;
    return { contentType: IMPLICIT_CONTENT_TYPE, closed: false, lastAccess: now, createdOverHttp: false, forkRefs: 0, gone: false };
  }

  #create(request: Extract<ProtocolRequest, { op: "create" }>, meta: ProtocolMeta | undefined, now: number): ProtocolAnswer {
    const fork = request.fork;
    const contentType = request.contentType ?? fork?.contentType ?? DEFAULT_CONTENT_TYPE;
    if (fork && request.contentType !== undefined && mediaType(request.contentType) !== mediaType(fork.contentType)) {
      return answer(409, {}, "Content type mismatch with source stream");
    }
    const inherit = fork && request.ttlSeconds === undefined && request.expiresAt === undefined;
    const ttlSeconds = inherit ? fork.ttlSeconds : request.ttlSeconds;
    const expiresAt = inherit ? fork.expiresAt : request.expiresAt;
    if (meta?.gone) return answer(409, {}, "Stream was deleted but still has forks");
    if (meta) {
      const same =
        mediaType(meta.contentType) === mediaType(contentType) &&
        meta.ttlSeconds === ttlSeconds &&
        meta.expiresAt === expiresAt &&
        meta.closed === request.closed &&
        meta.forkedFrom === fork?.from &&
        (fork === undefined || (meta.forkOffset === fork.offsetParam && (meta.forkSubOffset ?? 0) === (fork.subOffset ?? 0)));
      if (!same) return answer(409, {}, "Stream already exists with different configuration");
      return answer(200, this.#describe(meta));
    }
    if ("invalid" in request.body) return answer(400, {}, request.body.invalid);
    const inherited = fork ? fork.events : [];
    if (inherited.length + request.body.chunks.length > 0) this.#host.append([...inherited, ...request.body.chunks], request.stamp);
    const created: ProtocolMeta = {
      contentType,
      ...(ttlSeconds !== undefined ? { ttlSeconds } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      closed: request.closed,
      lastAccess: now,
      createdOverHttp: true,
      forkRefs: 0,
      gone: false,
      ...(fork ? { forkedFrom: fork.from, ...(fork.offsetParam ? { forkOffset: fork.offsetParam } : {}), ...(fork.subOffset ? { forkSubOffset: fork.subOffset } : {}) } : {}),
    };
    this.#tables.saveMeta(created);
    this.notify();
    return answer(201, this.#describe(created));
  }

  #append(request: Extract<ProtocolRequest, { op: "append" }>, meta: ProtocolMeta, now: number): ProtocolAnswer {
    const { producer } = request;
    const tail = () => formatOffset(this.#host.head());
    const echo = (seq: number): Record<string, string> => (producer ? { [H.producerEpoch]: String(producer.epoch), [H.producerSeq]: String(seq) } : {});
    if (meta.closed) {
      if (!producer && !request.body && request.close) return answer(204, { [H.nextOffset]: tail(), [H.closed]: "true" });
      if (producer && meta.closedBy && sameTuple(meta.closedBy, producer)) {
        return answer(204, { [H.nextOffset]: tail(), [H.closed]: "true", ...echo(producer.seq) });
      }
      return answer(409, { [H.closed]: "true", [H.nextOffset]: tail() }, "Stream is closed");
    }
    // Like DELETE: a context's or another writer's stream is not the protocol's to end.
    if (request.close && !meta.createdOverHttp) return answer(403, {}, "only streams created over this protocol may be closed over it");
    if (request.body && request.contentType !== undefined && mediaType(request.contentType) !== mediaType(meta.contentType)) {
      return answer(409, {}, "Content-type mismatch");
    }
    const check = producer ? checkProducer(this.#tables.producer(producer.id), producer) : undefined;
    if (check && check.status !== "accepted") return producerRefusal(check, producer as ProducerTuple);
    if (request.body && request.streamSeq !== undefined && meta.lastStreamSeq !== undefined && request.streamSeq <= meta.lastStreamSeq) {
      return answer(409, {}, "Sequence conflict");
    }
    const body = request.body && "json" in request.body ? checkedEventsOfJson(request.body.json) : request.body;
    if (body && "invalid" in body) return answer(400, {}, body.invalid);
    if (body) this.#host.append(body.chunks, request.stamp);
    if (producer) this.#tables.saveProducer(producer.id, producer.epoch, producer.seq, now);
    const next: ProtocolMeta = { ...meta, lastAccess: now };
    if (request.body && request.streamSeq !== undefined) next.lastStreamSeq = request.streamSeq;
    if (request.close) {
      next.closed = true;
      if (producer) next.closedBy = { ...producer };
    }
    // The TTL window slides in memory; it is written only when something else changes or a TTL needs it.
    if (next.ttlSeconds !== undefined || request.close || next.lastStreamSeq !== meta.lastStreamSeq || !this.#tables.meta) this.#tables.saveMeta(next);
    else this.#tables.touch(now);
    if (request.close) this.notify();
    const headers = { [H.nextOffset]: tail(), ...echo(producer?.seq ?? 0), ...(request.close ? { [H.closed]: "true" } : {}) };
    return answer(producer && request.body ? 200 : 204, headers);
  }

  async #read(request: Extract<ProtocolRequest, { op: "read" }>, meta: ProtocolMeta): Promise<ProtocolAnswer> {
    const head = this.#host.head();
    if ("now" in request.from && request.live === undefined) {
      return answer(
        200,
        { "content-type": meta.contentType, [H.nextOffset]: formatOffset(head), [H.upToDate]: "true", "cache-control": "no-store", ...(meta.closed ? { [H.closed]: "true" } : {}) },
        isJsonMode(meta.contentType) ? "[]" : "",
      );
    }
    const after = "now" in request.from ? head : request.from.after;
    let page = readPage(this.#host.sql, this.#host.path, after, meta.contentType);
    // An SSE stream's first step (waitMs 0) answers at once: it neither waits nor counts as a waiter.
    if (page.count === 0 && after >= head && request.live !== undefined && !meta.closed && request.waitMs > 0) {
      if (this.#waiters.size >= LIMITS.STREAMS_HTTP_LIVE_WAITERS_MAX) {
        return answer(503, { "retry-after": "1" }, `a stream keeps at most ${LIMITS.STREAMS_HTTP_LIVE_WAITERS_MAX} live readers waiting (STREAMS_HTTP_LIVE_WAITERS_MAX)`);
      }
      await this.#wait(request.waitMs);
      const current = this.#tables.meta ?? meta;
      if (this.#host.head() === 0 && !this.#tables.meta) return answer(404, {}, "Stream not found");
      page = readPage(this.#host.sql, this.#host.path, after, current.contentType);
      meta = current;
    }
    const tail = this.#host.head();
    const upToDate = page.last >= tail;
    const closedHere = meta.closed && upToDate;
    if (request.live === "sse") return { status: 200, headers: {}, body: page.body, sse: { last: page.last, upToDate, closed: closedHere, count: page.count } };
    if (page.count === 0 && request.live === "long-poll") {
      return answer(204, { [H.nextOffset]: formatOffset(page.last), [H.upToDate]: "true", ...(closedHere ? { [H.closed]: "true" } : {}) });
    }
    const headers: Record<string, string> = {
      "content-type": meta.contentType,
      [H.nextOffset]: formatOffset(page.last),
      etag: this.#etag(request.offsetParam, page.last, closedHere),
    };
    if (upToDate) headers[H.upToDate] = "true";
    if (closedHere) headers[H.closed] = "true";
    return answer(200, headers, page.body);
  }

  #wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.#waiters.add(wake);
    });
  }

  #delete(meta: ProtocolMeta): ProtocolAnswer {
    if (!meta.createdOverHttp) return answer(403, {}, "only streams created over this protocol may be deleted over it");
    if (meta.forkRefs > 0) {
      this.#tables.saveMeta({ ...meta, gone: true });
      return answer(204);
    }
    const release = meta.forkedFrom;
    this.#erase();
    return release === undefined ? answer(204) : { ...answer(204), release };
  }

  /** A fork of this stream was deleted: drop its reference, and finish a deferred delete when it was the last. */
  #release(meta: ProtocolMeta | undefined): ProtocolAnswer {
    if (!meta || !meta.createdOverHttp) return answer(204);
    const forkRefs = Math.max(0, meta.forkRefs - 1);
    if (meta.gone && forkRefs === 0) {
      const release = meta.forkedFrom;
      this.#erase();
      return release === undefined ? answer(204) : { ...answer(204), release };
    }
    this.#tables.saveMeta({ ...meta, forkRefs });
    return answer(204);
  }

  /** What a fork inherits from this stream up to `offset` (the head by default), taking a reference on it. */
  #forkSource(request: Extract<ProtocolRequest, { op: "fork-source" }>, meta: ProtocolMeta | undefined): ProtocolAnswer {
    if (!meta) return answer(404, {}, "Source stream not found");
    if (meta.gone) return answer(409, {}, "source stream was deleted but still has active forks");
    const head = this.#host.head();
    const offset = request.offset ?? head;
    if (offset > head) return answer(400, {}, "Fork offset beyond source stream length");
    const sub = request.subOffset ?? 0;
    // Checked before anything is read or counted: a JSON fork also copies `sub` messages past the
    // offset, a byte fork a prefix of the one event after it.
    const copied = offset + (sub > 0 ? (isJsonMode(meta.contentType) ? sub : 1) : 0);
    if (copied > LIMITS.STREAMS_HTTP_FORK_MAX_EVENTS) return answer(400, {}, `a fork copies at most ${LIMITS.STREAMS_HTTP_FORK_MAX_EVENTS} events (STREAMS_HTTP_FORK_MAX_EVENTS)`);
    if (payloadBytes(this.#host.sql, copied) > LIMITS.STREAMS_HTTP_FORK_MAX_BYTES) {
      return answer(400, {}, `a fork copies at most ${LIMITS.STREAMS_HTTP_FORK_MAX_BYTES} bytes of events (STREAMS_HTTP_FORK_MAX_BYTES)`);
    }
    const events: unknown[] = eventInputsBetween(this.#host.sql, 0, offset, offset);
    if (sub > 0) {
      const tail = this.#subOffsetPrefix(offset, sub, meta.contentType);
      if (!tail) return answer(400, {}, "Invalid fork sub-offset");
      events.push(...tail);
    }
    if (meta.createdOverHttp) this.#tables.saveMeta({ ...meta, forkRefs: meta.forkRefs + 1 });
    return {
      ...answer(200),
      fork: {
        contentType: meta.contentType,
        ...(meta.ttlSeconds !== undefined ? { ttlSeconds: meta.ttlSeconds } : {}),
        ...(meta.expiresAt !== undefined ? { expiresAt: meta.expiresAt } : {}),
        events: chunkInputs(events),
      },
    };
  }

  /** JSON: the next `sub` messages; bytes: the first `sub` bytes of the next event. undefined when it overshoots. */
  #subOffsetPrefix(offset: number, sub: number, contentType: string): unknown[] | undefined {
    if (isJsonMode(contentType)) {
      const next = eventInputsBetween(this.#host.sql, offset, Number.MAX_SAFE_INTEGER, sub);
      return next.length === sub && next.every((event) => event.type === MESSAGE_APPENDED) ? next : undefined;
    }
    const [next] = eventInputsBetween(this.#host.sql, offset, Number.MAX_SAFE_INTEGER, 1);
    if (!next || next.type !== BYTES_APPENDED) return undefined;
    const bytes = bytesOfPayload(next.payload as BytesPayload);
    if (sub > bytes.length) return undefined;
    return [{ type: BYTES_APPENDED, payload: { base64: base64(bytes.subarray(0, sub)) } }];
  }

  #erase(): void {
    this.#host.clear();
    this.#tables.clear();
    this.notify();
  }

  #describe(meta: ProtocolMeta): Record<string, string> {
    const headers: Record<string, string> = { "content-type": meta.contentType, [H.nextOffset]: formatOffset(this.#host.head()) };
    if (meta.closed) headers[H.closed] = "true";
    if (meta.ttlSeconds !== undefined) headers[H.ttl] = String(meta.ttlSeconds);
    if (meta.expiresAt !== undefined) headers[H.expiresAt] = meta.expiresAt;
    return headers;
  }

  #etag(start: string, end: number, closed: boolean): string {
    return `"${btoa(encodeURIComponent(this.#host.path))}:${start}:${formatOffset(end)}${closed ? ":c" : ""}"`;
  }
}

/** Stored payload bytes of the first `count` events (read from each row's header, not its text). */
function payloadBytes(sql: SqlStorage, count: number): number {
  return sql.exec<{ n: number }>("SELECT coalesce(sum(octet_length(payload)), 0) AS n FROM (SELECT payload FROM journal ORDER BY offset LIMIT ?)", count).one().n;
}

/** Event inputs as JSON arrays that each fit one append (APPEND_MAX_EVENTS, APPEND_MAX_BYTES). */
function chunkInputs(events: unknown[]): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const event of events) {
    const text = JSON.stringify(event);
    if (current.length > 0 && (current.length === STREAM_LIMITS.APPEND_MAX_EVENTS || bytes + text.length > STREAM_LIMITS.APPEND_MAX_BYTES / 3)) {
      chunks.push(`[${current.join(",")}]`);
      current = [];
      bytes = 0;
    }
    current.push(text);
    bytes += text.length;
  }
  if (current.length > 0) chunks.push(`[${current.join(",")}]`);
  return chunks;
}

function sameTuple(a: ProducerTuple, b: ProducerTuple): boolean {
  return a.id === b.id && a.epoch === b.epoch && a.seq === b.seq;
}

function producerRefusal(check: Exclude<ReturnType<typeof checkProducer>, { status: "accepted" }>, producer: ProducerTuple): ProtocolAnswer {
  switch (check.status) {
    case "duplicate":
      return answer(204, { [H.producerEpoch]: String(producer.epoch), [H.producerSeq]: String(check.lastSeq) });
    case "stale-epoch":
      return answer(403, { [H.producerEpoch]: String(check.currentEpoch) }, "Stale producer epoch");
    case "invalid-epoch-seq":
      return answer(400, {}, "New epoch must start with sequence 0");
    case "sequence-gap":
      return answer(409, { [H.expectedSeq]: String(check.expectedSeq), [H.receivedSeq]: String(check.receivedSeq) }, "Producer sequence gap");
  }
}
