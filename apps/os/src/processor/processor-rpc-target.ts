import { RpcTarget } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import { relay } from "../api/relay.ts";
import { unwrapCoded } from "../api/coded-result.ts";
import { stampOf, type Caller } from "../capability-host/capability-host-api.ts";
import { actsAsSelfOrAncestor } from "../itx/context-lifecycle.ts";
import { LIMITS, limitDetails } from "../limits.ts";
import { SUBSCRIPTION_CONFIGURED } from "../stream/stream-core.ts";
import { streamStub, type StreamBackend } from "../stream/stream-rpc-target.ts";
import {
  parseClassName,
  parseProcessorKey,
  parseUserProcessorHostName,
  USER_PROCESSOR_BINDING,
  USER_PROCESSOR_ROW_PREFIX,
  userProcessorHostName,
  type UserProcessorAddress,
} from "./user-processor-address.ts";
import type { UserProcessorRow, UserProcessorSnapshot } from "iterate/types";

/** What `itx.processor` is bound to: fixed by the handle that made it. */
export interface ProcessorScope {
  env: Env;
  where(): Promise<{ projectId: string; path: string }>;
  caller: Caller;
}


/**
 * `itx.processor`: the config-repo processors that fold the handle's context's stream. A processor
 * is a `StreamProcessorDurableObject` subclass exported by `worker.ts` in `/repos/config`; it runs
 * as the project's code (the root), with its own durable state, and always from the newest
 * certified commit.
 *
 * @example
 * await itx.cd("/inbox").processor.subscribe({ key: "hoarder", className: "HoarderDurableObject" });
 * await itx.cd("/inbox").processor.snapshot("hoarder"); // { offset, state: { blobs: [...] }, version, ... }
 */
export class ProcessorRpcTarget extends RpcTarget {
  readonly #scope: ProcessorScope;

  constructor(scope: ProcessorScope) {
    super();
    this.#scope = scope;
  }

  /**
   * Subscribes `className` to this context's stream under `key`: it folds every event from the
   * stream's start (or from its own checkpoint when `key` folded here before). Subscribing again
   * with another class replaces the row; the state stays the key's.
   */
  async subscribe(input: unknown): Promise<{ key: string; className: string; stream: string; subscribedAtOffset: number }> {
    const { key, className, ...rest } = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
    if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `subscribe takes { key, className }, not ${Object.keys(rest).join(", ")}`);
    const address = { ...(await this.#scope.where()), key: parseProcessorKey(key), className: parseClassName(className) };
    await this.#refuseStrangers(address, "subscribe processors to");
    const stream = this.#stream(address);
    const others = (await this.#rows(stream)).filter((row) => row.key !== address.key);
    if (others.length >= LIMITS.USER_PROCESSORS_PER_STREAM_MAX) {
      throw new ItxError("INVALID_ARGUMENT", `a stream feeds at most ${LIMITS.USER_PROCESSORS_PER_STREAM_MAX} config-repo processors`, { details: limitDetails("USER_PROCESSORS_PER_STREAM_MAX") });
    }
    unwrapCoded(await relay(this.#host(address).check()));
    const [event] = await stream.append({
      events: [
        {
          type: SUBSCRIPTION_CONFIGURED,
          payload: {
            key: `${USER_PROCESSOR_ROW_PREFIX}${address.key}`,
            subscription: { type: "processor", binding: USER_PROCESSOR_BINDING, host: userProcessorHostName(address), processor: address.key },
          },
        },
      ],
      stamp: { ...stampOf(this.#scope.caller), platform: "processor" },
    });
    return { key: address.key, className: address.className, stream: address.path, subscribedAtOffset: event?.offset ?? 0 };
  }

  /** Ends the subscription under `key`; answers whether there was one. Its state stays for a later subscribe. */
  async unsubscribe(key: unknown): Promise<boolean> {
    const parsed = parseProcessorKey(key);
    const where = await this.#scope.where();
    await this.#refuseStrangers(where, "unsubscribe processors from");
    const stream = streamStub(this.#scope.env.STREAM, `${where.projectId}:${where.path}`);
    if (!(await this.#rows(stream)).some((row) => row.key === parsed)) return false;
    await stream.append({
      events: [{ type: SUBSCRIPTION_CONFIGURED, payload: { key: `${USER_PROCESSOR_ROW_PREFIX}${parsed}`, subscription: null } }],
      stamp: { ...stampOf(this.#scope.caller), platform: "processor" },
    });
    return true;
  }

  /** The config-repo processors this stream feeds. */
  async list(): Promise<UserProcessorRow[]> {
    const where = await this.#scope.where();
    return this.#rows(streamStub(this.#scope.env.STREAM, `${where.projectId}:${where.path}`));
  }

  /** The committed state of the processor subscribed here under `key`; NOT_FOUND when none is. */
  async snapshot(key: unknown): Promise<UserProcessorSnapshot> {
    const parsed = parseProcessorKey(key);
    const where = await this.#scope.where();
    const row = (await this.#rows(streamStub(this.#scope.env.STREAM, `${where.projectId}:${where.path}`))).find((candidate) => candidate.key === parsed);
    if (!row) throw new ItxError("NOT_FOUND", `no processor is subscribed to ${where.path} as ${parsed}`);
    return unwrapCoded(await relay(this.#host({ ...where, key: parsed, className: row.className }).snapshot()));
  }

  // A processor folds the context's stream as the project's code, and replacing or ending one
  // changes what that context's owner set up: as with capability rows and schedules, only code
  // acting as the context or one of its ancestors may; a sibling (another agent's script) may not.
  async #refuseStrangers(where: { projectId: string; path: string }, what: string): Promise<void> {
    const origin = this.#scope.caller.origin;
    if (await actsAsSelfOrAncestor(this.#scope.env, where, origin)) return;
    throw new ItxError("PERMISSION_DENIED", `code acting as ${origin} cannot ${what} ${where.path}: only the context itself and its ancestors can`, {
      details: { reason: "not-an-ancestor" },
    });
  }

  #stream(address: UserProcessorAddress): StreamBackend {
    return streamStub(this.#scope.env.STREAM, `${address.projectId}:${address.path}`);
  }

  #host(address: UserProcessorAddress) {
    return this.#scope.env.USER_PROCESSOR.getByName(userProcessorHostName(address));
  }

  // The stream's own table is the record: only rows in this context's stream are reachable here.
  async #rows(stream: StreamBackend): Promise<UserProcessorRow[]> {
    const info = await stream.info();
    return info.processors.flatMap((status) => {
      if (status.subscription.binding !== USER_PROCESSOR_BINDING || !status.key.startsWith(USER_PROCESSOR_ROW_PREFIX)) return [];
      const { className } = parseUserProcessorHostName(status.subscription.host);
      return [{ key: status.subscription.processor, className, cursor: status.cursor, failures: status.failures, ...(status.lastError === undefined ? {} : { lastError: status.lastError }) }];
    });
  }
}
