import { RpcTarget } from "cloudflare:workers";
import type { Env } from "../env.ts";
import type { Caller } from "../capability-host/capability-host-api.ts";
import { relay } from "../api/relay.ts";
import { unwrapCoded } from "../api/coded-result.ts";
import { parseScheduleDefinition, parseScheduleKey, type ScheduleView } from "./schedule-input.ts";
import type { SchedulerDurableObject } from "./scheduler-durable-object.ts";

/** What `itx.scheduler` is bound to: fixed by the handle that made it. */
export interface SchedulerScope {
  env: Env;
  where(): Promise<{ projectId: string; path: string }>;
  caller: Caller;
}

/**
 * `itx.scheduler`: the schedules of the handle's context. A schedule runs its script at the
 * context on a clock, as the code that set it (its principal and origin).
 *
 * @example
 * await itx.scheduler.set({ key: "heartbeat", every: 900, script: "async (itx) => { await itx.append({ type: 'app/tick' }) }" });
 * await itx.scheduler.list(); // [{ key: "heartbeat", every: 900, runCount: 0, nextAt: ..., ... }]
 * await itx.scheduler.cancel("heartbeat"); // true
 */
export class SchedulerRpcTarget extends RpcTarget {
  readonly #scope: SchedulerScope;

  constructor(scope: SchedulerScope) {
    super();
    this.#scope = scope;
  }

  /**
   * Defines a schedule: `{ key, every: seconds }` or `{ key, cron: "m h dom mon dow" }` (UTC), and a
   * script `async (itx) => { ... }`. Setting the same definition again keeps its clock and run count.
   */
  async set(input: unknown): Promise<ScheduleView & { changed: boolean }> {
    const definition = parseScheduleDefinition(input);
    const scheduler = await this.#stub();
    return unwrapCoded(await relay(scheduler.set({ definition, caller: this.#scope.caller })));
  }

  /** Cancels the schedule under `key`; answers whether there was one. */
  async cancel(key: unknown): Promise<boolean> {
    const scheduler = await this.#stub();
    return unwrapCoded(await relay(scheduler.cancel({ key: parseScheduleKey(key), caller: this.#scope.caller })));
  }

  /** The context's schedules with their run counts and next slots. */
  async list(): Promise<ScheduleView[]> {
    return relay((await this.#stub()).list());
  }

  async #stub(): Promise<DurableObjectStub<SchedulerDurableObject>> {
    const { projectId, path } = await this.#scope.where();
    return this.#scope.env.SCHEDULER.getByName(`${projectId}:${path}`);
  }
}
