import type { Connection } from "../api/connection.ts";
import type { LiveShape } from "./itx-contract.ts";
import { callLive, releaseLive, retainLive } from "./live-capability.ts";
import { isPlainData } from "./plain-data.ts";

// The capability host keeps every live capability it is given and can always call it. When the
// session that calls a live capability is served by the same Worker isolate as the session that
// provided it, the host need not call back into this isolate to reach the provider: it answers
// where the mount is (a `LocalLiveCall`) and the caller's request hands the call to the
// provider's. The host still resolves every call, so revokes and disconnects take effect exactly as
// before; what this saves is the host -> Worker hop and the result's trip back through the host.
//
// Workers bind I/O to the request that made it: the caller's request cannot write to the provider's
// WebSocket. So each registered value has a pump running in the provider's request; callers queue
// a job and wake it, and the pump makes the call there and settles the caller's promise. Only plain
// data crosses that way (the caller checks its arguments); a result holding stubs is parked on the
// host by the provider's request and fetched from there by the caller's, as Workers RPC.

let isolateId: string | undefined;

/** This isolate's id. Random values are not allowed at module load, so it is made on first use. */
export function thisIsolate(): string {
  isolateId ??= crypto.randomUUID();
  return isolateId;
}

/** What a host answers instead of a result when the provider's stub lives in the caller's isolate. */
export interface LocalLiveCall {
  projectId: string;
  /** The context whose table holds the mount. */
  context: string;
  mountPath: string[];
  providedAtOffset: number;
  shape: LiveShape;
  remainder: string[];
  connectionId: string;
}

/** A host's answer to an invoke: the capability's result, or a live call for the caller to make. */
export type InvokeOutcome = { value: unknown } | { local: LocalLiveCall };

/** What the pump hands the caller: the result, or where the host keeps a result that holds stubs. */
export type PumpedResult = { value: unknown } | { parked: string };

/** Keeps a result on the host for the caller's request to take (see `CapabilityHost.park`). */
export type Park = (value: unknown) => Promise<string>;

interface Job {
  shape: LiveShape;
  remainder: string[];
  args: unknown[];
  resolve(value: PumpedResult): void;
  reject(error: unknown): void;
}

class Pump {
  readonly #value: unknown;
  readonly #park: Park;
  readonly #queue: Job[] = [];
  #wake: (() => void) | undefined;
  #stopped = false;

  constructor(value: unknown, park: Park) {
    this.#value = value;
    this.#park = park;
    void this.#run();
  }

  call(job: Job): void {
    if (this.#stopped) throw new Error("stopped");
    this.#queue.push(job);
    this.#wake?.();
  }

  stop(): void {
    this.#stopped = true;
    this.#wake?.();
    releaseLive(this.#value);
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      const job = this.#queue.shift();
      if (!job) {
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
        continue;
      }
      void this.#call(job);
    }
    for (const job of this.#queue.splice(0)) job.reject(new Error("RPC session was shut down"));
  }

  async #call(job: Job): Promise<void> {
    try {
      const value = await callLive(job.shape, this.#value, job.remainder, job.args);
      job.resolve(isPlainData(value) ? { value } : { parked: await this.#park(value) });
    } catch (error) {
      job.reject(error);
    }
  }
}

const registered = new Map<string, Pump>();

/** The registry key of the mount provided on `{ projectId, path }` at `providedAtOffset`. */
export function liveKey(projectId: string, path: string, providedAtOffset: number): string {
  return `${projectId}:${path}@${providedAtOffset}`;
}

/**
 * Keeps a provider's live value in this isolate, with its pump, for as long as its connection
 * lasts (or until `forgetLocalLive`). Call it from the provider's request. Registering twice under
 * one key keeps the first.
 */
export function registerLocalLive(key: string, value: unknown, connection: Connection, park: Park): void {
  if (registered.has(key) || connection.closed) return;
  registered.set(key, new Pump(retainLive(value), park));
  connection.onClose(() => forgetLocalLive(key));
}

/** Calls the value registered under `key` in its provider's request; undefined when there is none. */
export function callRegistered(key: string, shape: LiveShape, remainder: string[], args: unknown[]): Promise<PumpedResult> | undefined {
  const pump = registered.get(key);
  if (!pump) return undefined;
  return new Promise((resolve, reject) => pump.call({ shape, remainder, args, resolve, reject }));
}

/** Drops and releases a registered value. */
export function forgetLocalLive(key: string): void {
  const pump = registered.get(key);
  if (!pump) return;
  registered.delete(key);
  pump.stop();
}
