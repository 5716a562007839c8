import { RpcTarget } from "cloudflare:workers";
import { callMembers } from "../capability-host/source-capability.ts";
import { installInvokeFallback } from "../itx/invoke-fallback.ts";

/**
 * A handle on a stateful dynamic worker. Stubs of Durable Object facets cannot leave the object
 * that hosts them, so the host hands out this target instead: every method called on it is
 * replayed onto the facet inside the host.
 */
export class DurableWorkerRpcTarget extends RpcTarget {
  readonly #facet: unknown;

  constructor(facet: unknown) {
    super();
    this.#facet = facet;
  }

  invokeCapability(input: { path: string[]; args: unknown[] }): Promise<unknown> {
    return callMembers(this.#facet, input.path, input.args);
  }
}
installInvokeFallback(DurableWorkerRpcTarget);
