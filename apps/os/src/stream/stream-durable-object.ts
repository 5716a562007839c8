import { DurableObject } from "cloudflare:workers";
import type { AppendReceipt, Reaction, StreamEvent } from "iterate/types";
import { ItxError } from "iterate/errors";
import { STREAM_LIMITS } from "iterate/stream/events";
import { asCoded, codedSync, type Coded } from "../api/coded-result.ts";
import { planAppend, type CheckedEventInputs } from "./append-plan.ts";
import { ProcessorDeliveries } from "./processor-deliveries.ts";
import type { CommitFacts } from "./delivery-due.ts";
import { Journal } from "./journal.ts";
import type { AppendRequest, StreamInfo, SubscribeRequest } from "./stream-api.ts";
import { LiveSubscriber, type BatchCallback } from "./live-subscribers.ts";
import { LOOP_LIMIT_RECORDED, loopLimitError } from "./reaction.ts";
import { STREAM_CORE_TYPES, STREAM_CORE_VERSION, isProcessorHostBinding, initialStreamCoreState, reduceStreamCore, type StreamCoreState } from "./stream-core.ts";
import { StreamRpcTarget, uncodedBackend } from "./stream-rpc-target.ts";
import { findByIdempotencyKey, firstStoredMatch, parseSubscribeRequest, parseWaitQuery, readEventsPage, readPackedPage } from "./stream-queries.ts";
import { Waiters } from "./waiters.ts";
import { LIMITS, limitDetails } from "../limits.ts";
import type { ProtocolAnswer, ProtocolRequest } from "../streams-http/protocol-api.ts";
import { StreamProtocol } from "../streams-http/stream-protocol.ts";
import { LAST_WOKEN_KEY, recordWoken } from "./stream-woken.ts";

const CORE_CHECKPOINT_KEY = "core-checkpoint";
/** Events the core checkpoint may lag the head by before an append saves it again (what a start replays at most). */
const CORE_CHECKPOINT_LAG_MAX = 4_096;

/** An append made inside this Worker: an RPC caller's request, or inputs already proven valid. */
type OwnAppend = Omit<AppendRequest, "events"> & { events: AppendRequest["events"] | CheckedEventInputs };

/** Events an append inside `#appendAll` wrote, announced only once the whole commit is in. */
interface Deferred {
  written: StreamEvent[];
  ephemeral: StreamEvent[];
}

/**
 * One stream: an append-only SQLite journal named by its coordinate `<projectId>:<path>`, live
 * subscriptions, waiters, and delivery to the processors it is subscribed to. Every append is one
 * SQLite transaction; nothing is acknowledged before it commits.
 */
export class StreamDurableObject extends DurableObject<Env> {
  readonly #projectId: string;
  readonly #path: string;
  readonly #journal: Journal;
  readonly #waiters = new Waiters();
  readonly #live = new Map<string, LiveSubscriber>();
  readonly #deliveries: ProcessorDeliveries;
  #core: StreamCoreState;
  /** The journal's head when the core checkpoint was last saved (or the offset it was restored from). */
  #coreSavedAt = 0;
  readonly #protocol: StreamProtocol;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const name = ctx.id.name;
    const colon = name?.indexOf(":") ?? -1;
    if (name === undefined || colon <= 0) throw new Error("a Stream Durable Object must be addressed by its coordinate name");
    this.#projectId = name.slice(0, colon);
    this.#path = name.slice(colon + 1);
    const sql = ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    this.#journal = new Journal(sql, () => this.#path);
    this.#core = this.#restoreCore();
    this.#deliveries = new ProcessorDeliveries({
      ctx,
      env,
      projectId: this.#projectId,
      path: this.#path,
      head: () => this.#journal.head,
      read: (after, limit) => this.#journal.read(after, Number.MAX_SAFE_INTEGER, limit, undefined, LIMITS.READ_PAGE_MAX_BYTES),
      capability: (stamp) => new StreamRpcTarget(uncodedBackend(this), stamp),
      quiet: () => this.#live.size === 0 && this.#waiters.size === 0,
    });
    this.#protocol = new StreamProtocol({
      sql,
      path: this.#path,
      head: () => this.#journal.head,
      append: (chunks, stamp) => {
        // One chunk is one INSERT, atomic on its own (a core change brings its own transaction):
        // an explicit transaction would only add its two statements to every request.
        const [only] = chunks;
        if (chunks.length === 1 && only !== undefined) {
          this.#append({ events: only, stamp, answer: "receipt" });
          return;
        }
        this.#appendAll(chunks.map((events) => ({ events, stamp, answer: "receipt" })));
      },
      clear: () => this.#clear(),
      erasable: () => this.#erasable() === undefined,
    });
    this.#deliveries.sync(this.#core);
    // Recording woken pumps the deliveries itself (every append does).
    if (!this.#recordWoken() && this.#deliveries.size > 0) ctx.waitUntil(this.#deliveries.pump());
  }

  // A new incarnation of a created project's root tells the project's worker (stream-woken.ts).
  // Only the constructor calls this: one incarnation records at most one woken, whatever it serves.
  #recordWoken(): boolean {
    if (this.#path !== "/") return false;
    try {
      return recordWoken({
        sql: this.ctx.storage.sql,
        path: this.#path,
        journal: this.#journal,
        append: (event) => this.#append({ events: [event], stamp: { platform: "stream" } }) as StreamEvent[],
      });
    } catch (error) {
      // The stream serves without it: the worker misses one wake, nothing else.
      console.warn(`stream ${this.#projectId}:${this.#path}: could not record stream/woken: ${String(error)}`);
      return false;
    }
  }

  // Every RPC method answers expected failures as values (`Coded`): a Durable Object method that
  // throws is printed by workerd as an uncaught exception with its stack, and any caller could make
  // the OS log as fast as it can send bad input. `streamStub` turns them back into ItxErrors.

  /** Appends events as one commit; answers them as stored (or as they were, for idempotent repeats). */
  append(request: AppendRequest): Coded<StreamEvent[] | AppendReceipt> {
    return codedSync(() => this.#append(request));
  }

  /** Reads durable events between exclusive bounds. */
  getEvents(input: unknown = {}): Coded<StreamEvent[]> {
    return codedSync(() => readEventsPage(this.#journal, input));
  }

  /** A page without type filters in the packed format (`Journal.readPacked`): the fast path for bulk reads. */
  getEventsPacked(input: unknown = {}): Coded<string> {
    return codedSync(() => readPackedPage(this.#journal, input));
  }

  /** The durable event appended with `key`, if any. */
  getByIdempotencyKey(key: string): Coded<StreamEvent | null> {
    return codedSync(() => findByIdempotencyKey(this.#journal, key));
  }

  /** Resolves with the first durable event (after `afterOffset`) that matches, or TIMEOUT. */
  waitForEvent(input: unknown): Promise<Coded<StreamEvent>> {
    return asCoded(async () => {
      const query = parseWaitQuery(input);
      return (await this.#waiters.scanning(() => firstStoredMatch(this.#journal, query))) ?? this.#waiters.wait(query.matches, query.timeoutMs, query.described);
    });
  }

  /**
   * Replays durable events after `afterOffset` to `callback`, then tails live, including ephemeral
   * events sent while connected. A second subscription with the same key replaces the first.
   */
  subscribe(request: SubscribeRequest): Coded<{ key: string; afterOffset: number; head: number }> {
    return codedSync(() => this.#subscribe(request));
  }

  /** One Durable Streams protocol operation (apps/os/src/streams-http/); the Worker's /streams route is its only caller. */
  http(request: ProtocolRequest): Promise<Coded<ProtocolAnswer>> {
    return asCoded(() => this.#protocol.handle(request));
  }

  // A stream deleted over the protocol: only one that feeds no processor, so no host folds it, and
  // that holds no platform fact. A PUT may come first at a path the platform writes to later (a
  // secret's audit, a directory's rows): the PUT does not make those facts the deleter's to erase.
  #clear(): void {
    const refusal = this.#erasable();
    if (refusal !== undefined) throw new ItxError("PERMISSION_DENIED", `${this.#path} ${refusal} and cannot be deleted`);
    for (const subscriber of this.#live.values()) subscriber.close();
    this.#live.clear();
    this.#journal.clear();
    this.ctx.storage.sql.exec("DELETE FROM meta WHERE key IN (?, ?)", CORE_CHECKPOINT_KEY, LAST_WOKEN_KEY);
    this.#core = initialStreamCoreState();
  }

  /** Why the protocol may not erase this stream, or undefined when it may. */
  #erasable(): string | undefined {
    if (Object.keys(this.#core.subscriptions).length > 0) return "feeds processors";
    if (this.#journal.holdsPlatformFacts()) return "holds facts the platform wrote";
    return undefined;
  }

  /**
   * Several appends as one commit, all or none: nobody (waiters, live subscribers, processors)
   * hears of any of them before all are in, and a refusal of the last one leaves the journal, its
   * head and the stream's core as they were before the first.
   */
  #appendAll(requests: OwnAppend[]): void {
    const core = this.#core;
    const savedAt = this.#coreSavedAt;
    const deferred: Deferred = { written: [], ephemeral: [] };
    try {
      this.ctx.storage.transactionSync(() => {
        for (const request of requests) this.#append(request, deferred);
      });
    } catch (error) {
      // Rolled back: what memory holds about the journal and the core is from the undone writes.
      this.#journal.reset();
      this.#coreSavedAt = savedAt;
      if (this.#core !== core) {
        this.#core = core;
        this.#deliveries.sync(core);
      }
      throw error;
    }
    this.#afterCommit(deferred.written, deferred.ephemeral, false);
  }

  #append(request: OwnAppend & { answer: "receipt" }, deferred?: Deferred): AppendReceipt;
  #append(request: OwnAppend, deferred?: Deferred): StreamEvent[] | AppendReceipt;
  /** One append; with `deferred`, part of `#appendAll`: its events are collected there instead of announced. */
  #append(request: OwnAppend, deferred?: Deferred): StreamEvent[] | AppendReceipt {
    const plan = planAppend(
      {
        projectId: this.#projectId,
        path: this.#path,
        head: this.#journal.head,
        core: this.#core,
        byIdempotencyKey: (key) => this.#journal.byIdempotencyKey(key),
        hasBinding: (name) => isProcessorHostBinding(this.env, name),
      },
      request,
    );
    if (plan.kind === "runaway") this.#refuseRunaway(plan.reaction, deferred);
    const { pending, answers, ephemeralAt, core } = plan;

    let written: StreamEvent[] = [];
    const runsMoved = core.openRuns !== this.#core.openRuns;
    if (pending.length > 0) {
      const createdAt = new Date().toISOString();
      // One INSERT is atomic on its own; saving the core adds a second statement, so only then is
      // an explicit transaction needed (it costs two extra statements per append). The core
      // checkpoint is a cache rolled forward from the log on every start, so it is saved with a
      // change of subscriptions or jail (rare, and read at once by a new incarnation), and
      // otherwise once it lags CORE_CHECKPOINT_LAG_MAX events: open runs come and go with every
      // agent turn and are replayed from the log.
      const lagging = this.#journal.head - this.#coreSavedAt >= CORE_CHECKPOINT_LAG_MAX;
      const save = lagging || (core !== this.#core && !onlyRunsDiffer(core, this.#core));
      try {
        written =
          !save
            ? this.#journal.write(pending, createdAt)
            : this.ctx.storage.transactionSync(() => {
                const events = this.#journal.write(pending, createdAt);
                this.#saveCore(core);
                return events;
              });
      } catch (error) {
        this.#journal.reset();
        throw error;
      }
      if (core !== this.#core) {
        this.#core = core;
        this.#deliveries.sync(this.#core);
      }
    }
    const result = answers.map((answer) => (typeof answer === "number" ? (written[answer] as StreamEvent) : answer));
    for (const { event } of ephemeralAt) event.createdAt = new Date().toISOString();
    if (deferred) {
      deferred.written.push(...written);
      for (const { event } of ephemeralAt) deferred.ephemeral.push(event);
    } else {
      this.#afterCommit(written, ephemeralAt.map(({ event }) => event), request.holdDelivery === true, {
        foldedBy: typeof request.foldedBy === "string" ? request.foldedBy : undefined,
        runsMoved,
      });
    }
    if (request.answer === "receipt") return { offsets: result.map((event) => event.offset), head: this.#journal.head };
    return result;
  }

  // A write from a chain of reactions past its last round: the context records the stop once per
  // chain (keyed by where it began), and the write is refused with LOOP_LIMIT. Reads are untouched.
  // Inside #appendAll (`deferred`) the fact is part of that commit, announced with it or undone with it.
  #refuseRunaway(reaction: Reaction, deferred?: Deferred): never {
    const error = loopLimitError(reaction, this.#path);
    try {
      this.#append({
        events: [
          {
            type: LOOP_LIMIT_RECORDED,
            payload: { began: reaction.began, round: reaction.round, limit: LIMITS.REACTION_ROUNDS_MAX, message: error.message },
            idempotencyKey: `itx/loop-limit:${reaction.began}`,
          },
        ],
        stamp: { platform: "stream" },
      }, deferred);
    } catch (recordError) {
      // The same chain stopped here before with another round: its one fact is already recorded.
      if (!(recordError instanceof ItxError && recordError.code === "IDEMPOTENCY_CONFLICT")) throw recordError;
    }
    throw error;
  }

  head(): number {
    return this.#journal.head;
  }

  #subscribe(request: SubscribeRequest): { key: string; afterOffset: number; head: number } {
    const { key, afterOffset, types } = parseSubscribeRequest(request);
    this.#live.get(key)?.close();
    this.#live.delete(key);
    if (this.#live.size >= LIMITS.LIVE_SUBSCRIBERS_MAX) {
      throw new ItxError("INVALID_ARGUMENT", `a stream has at most ${LIMITS.LIVE_SUBSCRIBERS_MAX} live subscribers`, {
        details: limitDetails("LIVE_SUBSCRIBERS_MAX"),
      });
    }
    // Parameters are released when this call returns: keep our own reference to the callback.
    const callback = (request.callback.dup ? request.callback.dup() : request.callback) as BatchCallback;
    const subscriber = new LiveSubscriber({
      key,
      afterOffset,
      callback,
      ...(types ? { types } : {}),
      onFailure: (failed) => {
        if (this.#live.get(failed.key) === failed) this.#live.delete(failed.key);
      },
    });
    this.#live.set(key, subscriber);
    this.ctx.waitUntil(subscriber.pump(this.#history()));
    return { key, afterOffset, head: this.#journal.head };
  }

  /** Ends a live subscription; answers whether one existed. */
  unsubscribe(key: string): boolean {
    const subscriber = this.#live.get(key);
    if (!subscriber) return false;
    subscriber.close();
    this.#live.delete(key);
    return true;
  }

  info(): StreamInfo {
    return {
      projectId: this.#projectId,
      path: this.#path,
      head: this.#journal.head,
      liveSubscribers: this.#live.size,
      processors: this.#deliveries.statuses(),
    };
  }

  /**
   * Ends the processor sessions idle for `idleMs` whose hosts agree (the stream does this on its own
   * DELIVERY_SESSION_IDLE_MS after its last delivery); answers how many ended. For tests.
   */
  releaseIdleSessions(idleMs?: number): Promise<number> {
    return this.#deliveries.releaseIdle(idleMs);
  }

  /** Retries hosted-processor deliveries that failed, and delivers what a stopped incarnation had not (the backstop). */
  override async alarm(): Promise<void> {
    await this.#deliveries.alarm();
  }

  #afterCommit(written: StreamEvent[], ephemeral: StreamEvent[], hold: boolean, facts: CommitFacts = {}): void {
    if (written.length > 0) this.#waiters.offer(written);
    if (written.length > 0) this.#protocol.notify();
    if (this.#live.size > 0) {
      const history = this.#history();
      for (const subscriber of this.#live.values()) {
        for (const event of ephemeral) subscriber.pushEphemeral(event);
        this.ctx.waitUntil(subscriber.pump(history));
      }
    }
    if (written.length > 0) this.#deliveries.afterCommit(written, hold, facts);
  }

  #history() {
    return {
      head: () => this.#journal.head,
      read: (after: number, before: number, limit: number) => this.#journal.read(after, before, limit, undefined, LIMITS.READ_PAGE_MAX_BYTES),
    };
  }

  // The core checkpoint is a cache of the fold of the core's events (STREAM_CORE_TYPES): when
  // missing, or of another STREAM_CORE_VERSION, it is rebuilt by replaying them, and it is rolled
  // forward from its offset on every start.
  #restoreCore(): StreamCoreState {
    const row = this.ctx.storage.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", CORE_CHECKPOINT_KEY).toArray()[0];
    const saved = row ? (JSON.parse(row.value) as { offset: number; state: StreamCoreState; version?: number }) : undefined;
    // A checkpoint of another version of the fold is replayed from the start.
    let { offset, state } = saved?.version === STREAM_CORE_VERSION ? saved : { offset: 0, state: initialStreamCoreState() };
    this.#coreSavedAt = offset;
    for (;;) {
      const page = this.#journal.read(offset, Number.MAX_SAFE_INTEGER, STREAM_LIMITS.READ_MAX_LIMIT, STREAM_CORE_TYPES);
      for (const event of page) state = reduceStreamCore(state, event);
      const last = page.at(-1);
      if (!last) break;
      offset = last.offset;
    }
    // Replayed for a checkpoint of another version, or from far behind: saved now, so the next start rolls forward.
    if ((saved !== undefined && saved.version !== STREAM_CORE_VERSION) || this.#journal.head - this.#coreSavedAt >= CORE_CHECKPOINT_LAG_MAX) this.#saveCore(state);
    return state;
  }

  #saveCore(state: StreamCoreState): void {
    this.#coreSavedAt = this.#journal.head;
    this.ctx.storage.sql.exec(
      "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      CORE_CHECKPOINT_KEY,
      JSON.stringify({ offset: this.#journal.head, state, version: STREAM_CORE_VERSION }),
    );
  }
}

/** Whether two core states differ in their open runs alone (what the core checkpoint need not be saved for). */
function onlyRunsDiffer(a: StreamCoreState, b: StreamCoreState): boolean {
  return a.subscriptions === b.subscriptions && a.jailed === b.jailed && a.jailedAt === b.jailedAt && a.appendGranted === b.appendGranted && a.appendRowAt === b.appendRowAt;
}
