import { RpcTarget } from "cloudflare:workers";
import { callMembers } from "../capability-host/source-capability.ts";
import type { MaterialScope } from "../egress/materials-in-use.ts";
import { installInvokeFallback } from "../itx/invoke-fallback.ts";
import { scrubbedCall } from "./scrubbed-call.ts";

/**
 * A handle on a dynamic worker loaded in this process: a stateless worker's entrypoint, or a
 * durable worker's facet (whose stub cannot leave the object that hosts it). Every method called
 * on it (`fetch` included, and paths such as `a.b()`) is replayed onto the worker, and what it
 * answers or throws passes the secret scrub of `scope` (scrubbed-call.ts) before the caller sees
 * it. RunnerIsolateRpcTarget is the same handle on a worker in the runner.
 */
export class LoadedWorkerRpcTarget extends RpcTarget {
  readonly #target: unknown;
  readonly #scope: MaterialScope;

  constructor(target: unknown, scope: MaterialScope) {
    super();
    this.#target = target;
    this.#scope = scope;
  }

  invokeCapability(input: { path: string[]; args: unknown[] }): Promise<unknown> {
    return scrubbedCall(this.#scope, () => callMembers(this.#target, input.path, input.args));
  }
}
installInvokeFallback(LoadedWorkerRpcTarget);
