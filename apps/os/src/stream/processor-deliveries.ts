import type { StreamEvent } from "iterate/types";
import { throwCoded } from "../api/coded-result.ts";
import { type CommitFacts, deliveryDue } from "./delivery-due.ts";
import { HostedDelivery, type ProcessorSession } from "./hosted-delivery.ts";
import { currentHostBinding, isProcessorHostBinding, type StreamCoreState } from "./stream-core.ts";
import { StreamRpcTarget } from "./stream-rpc-target.ts";
import { USER_PROCESSOR_BINDING } from "../processor/user-processor-address.ts";
import { LIMITS } from "../limits.ts";

/** What the deliveries need from their Stream Durable Object. */
export interface DeliveryHost {
  ctx: DurableObjectState;
  env: Env;
  projectId: string;
  path: string;
  /** The journal's head and rows after an offset. */
  head(): number;
  read(after: number, limit: number): StreamEvent[];
  /** The Stream capability a woken host folds through (the stream's own backend). */
  capability(stamp: ConstructorParameters<typeof StreamRpcTarget>[1]): StreamRpcTarget;
  /**
   * True when nothing but its processor sessions keeps the stream in memory for a reason: no live
   * subscriber (held only here) and no waiter. Idle sessions are released only then.
   */
  quiet(): boolean;
}

/**
 * A stream's deliveries to the processors subscribed to it (one HostedDelivery each, as the
 * core fold's subscriptions say): pumped after every commit that is due to them (delivery-due.ts),
 * or after DELIVERY_HOLD_MS for the rest and for an append that holds delivery, and retried from
 * the Durable Object's alarm.
 */
export class ProcessorDeliveries {
  readonly #host: DeliveryHost;
  readonly #deliveries = new Map<string, HostedDelivery>();
  #held: ReturnType<typeof setTimeout> | undefined;
  #releaseCheck: ReturnType<typeof setTimeout> | undefined;
  /** True while this incarnation has an alarm standing (DELIVERY_BACKSTOP_MS, or earlier) for its commits. */
  #backstopArmed = false;

  constructor(host: DeliveryHost) {
    this.#host = host;
  }

  get size(): number {
    return this.#deliveries.size;
  }

  /** Each delivery's progress, for `info()`. */
  statuses(): ReturnType<HostedDelivery["status"]>[] {
    return [...this.#deliveries.values()].map((delivery) => delivery.status());
  }

  /** Matches the deliveries to the subscriptions the core fold holds now. */
  sync(core: StreamCoreState): void {
    const wanted = core.subscriptions;
    for (const [key, delivery] of this.#deliveries) {
      const now = wanted[key];
      if (!now || JSON.stringify(now) !== JSON.stringify(delivery.subscription)) {
        delivery.close();
        this.#deliveries.delete(key);
      }
    }
    for (const [key, subscription] of Object.entries(wanted)) {
      if (!this.#deliveries.has(key)) this.#deliveries.set(key, new HostedDelivery(key, subscription));
    }
  }

  /**
   * After the commit of `written`: pump each delivery it is due to now, and the others (all of
   * them, when the append holds delivery) within DELIVERY_HOLD_MS, whichever pump comes first.
   * `facts`: what else the commit did (see deliveryDue).
   */
  afterCommit(written: readonly StreamEvent[], hold: boolean, facts: CommitFacts = {}): void {
    if (this.#deliveries.size === 0) return;
    this.#armBackstop();
    const due = hold ? [] : [...this.#deliveries.values()].filter((delivery) => deliveryDue(delivery.key, delivery.subscription, written, facts));
    if (due.length === this.#deliveries.size) {
      this.#host.ctx.waitUntil(this.pump());
      return;
    }
    if (due.length > 0) this.#host.ctx.waitUntil(this.#pump(due));
    // Any pump of a delivery sends everything up to the head, held events included; this one is the backstop.
    this.#held ??= setTimeout(() => this.#host.ctx.waitUntil(this.pump()), LIMITS.DELIVERY_HOLD_MS);
  }

  /** The stream's alarm went off: sends what is due (see pump); the next commit arms the backstop again. */
  alarm(): Promise<void> {
    this.#backstopArmed = false;
    return this.pump();
  }

  /** Sends every delivery whose retry is due what it has not had; sets the alarm for the earliest retry. */
  async pump(): Promise<void> {
    if (this.#held !== undefined) {
      clearTimeout(this.#held);
      this.#held = undefined;
    }
    await this.#pump([...this.#deliveries.values()]);
  }

  async #pump(deliveries: HostedDelivery[]): Promise<void> {
    const now = Date.now();
    const host = this.#host;
    await Promise.all(
      deliveries
        .filter((delivery) => delivery.retryAt <= now)
        .map((delivery) =>
          delivery.pump({
            head: () => host.head(),
            read: (after, limit) => host.read(after, limit),
            wake: () => this.#wake(delivery),
            now: () => Date.now(),
          }),
        ),
    );
    const retries = [...this.#deliveries.values()].map((delivery) => delivery.retryAt).filter((at) => at > 0);
    if (retries.length > 0) await moveAlarmEarlier(host.ctx.storage, Math.min(...retries));
    this.#scheduleRelease();
  }

  // A commit is delivered as it lands (or within DELIVERY_HOLD_MS), by this incarnation. Should it
  // stop first (the OS killed mid-delivery), nothing would bring the stream up again to deliver
  // until someone touches it: an alarm stands DELIVERY_BACKSTOP_MS ahead, set once per stretch of
  // commits (a new incarnation delivers to every processor from its checkpoint, see the Stream's
  // constructor). Only ever moved earlier: a retry's alarm may stand sooner.
  #armBackstop(): void {
    if (this.#backstopArmed) return;
    this.#backstopArmed = true;
    const storage = this.#host.ctx.storage;
    const at = Date.now() + LIMITS.DELIVERY_BACKSTOP_MS;
    const armed = moveAlarmEarlier(storage, at);
    this.#host.ctx.waitUntil(
      armed.catch(() => {
        this.#backstopArmed = false;
      }),
    );
  }

  /**
   * Ends the sessions idle for `idleMs` whose hosts agree (DELIVERY_SESSION_IDLE_MS after the last
   * pump by default). A session pins both objects in memory (each holds a capability of the other),
   * so without this a project's every context stayed loaded for as long as the OS ran. Nothing is
   * lost: the next event wakes the host again, from its checkpoint. Answers how many were released.
   */
  async releaseIdle(idleMs: number = LIMITS.DELIVERY_SESSION_IDLE_MS): Promise<number> {
    if (!this.#host.quiet()) return 0;
    const now = Date.now();
    const outcomes = await Promise.all([...this.#deliveries.values()].map((delivery) => delivery.release(now, idleMs)));
    return outcomes.filter((outcome) => outcome === "released").length;
  }

  // One check at a time, re-armed while a session that could be released is still open.
  #scheduleRelease(): void {
    if (this.#releaseCheck !== undefined) return;
    if (![...this.#deliveries.values()].some((delivery) => delivery.releasable)) return;
    this.#releaseCheck = setTimeout(() => {
      this.#releaseCheck = undefined;
      this.#host.ctx.waitUntil(
        this.releaseIdle()
          .catch(() => 0)
          .then(() => this.#scheduleRelease()),
      );
    }, LIMITS.DELIVERY_SESSION_IDLE_MS);
  }

  async #wake(delivery: HostedDelivery): Promise<ProcessorSession> {
    const { host, processor } = delivery.subscription;
    const binding = currentHostBinding(delivery.subscription.binding);
    const env = this.#host.env;
    const namespace = (env as unknown as Record<string, DurableObjectNamespace | undefined>)[binding];
    if (!namespace || !isProcessorHostBinding(env, binding)) throw new Error(`no processor host binding ${binding}`);
    // oxlint-disable-next-line typescript/no-explicit-any -- processor hosts are a duck-typed RPC interface
    const stub = namespace.getByName(host) as any;
    // A host of the platform's code writes as that processor; a host of a project's own code
    // (config-repo processors) gets no platform authority, whatever its row's slug says.
    const stamp = binding === USER_PROCESSOR_BINDING ? { origin: this.#host.path } : { platform: `processor-host:${processor}` };
    // The host checks `coordinate` against the streams it folds: a wake from any other is refused.
    const coordinate = `${this.#host.projectId}:${this.#host.path}`;
    // A host may answer an expected refusal as a coded value (answerCoded) rather than throw it.
    return throwCoded<ProcessorSession>(await stub.wakeStreamProcessor({ name: processor, stream: this.#host.capability(stamp), coordinate }));
  }
}

// An alarm already standing sooner serves both: it goes off, pumps what is due, and sets the next.
async function moveAlarmEarlier(storage: DurableObjectStorage, at: number): Promise<void> {
  const current = await storage.getAlarm();
  if (current === null || current > at) await storage.setAlarm(at);
}
