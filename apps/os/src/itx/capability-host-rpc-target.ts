import { RpcTarget } from "cloudflare:workers";
import { installInvokeFallback } from "./invoke-fallback.ts";
import type { ItxRpcTarget } from "./itx-rpc-target.ts";

/** `itx.capabilityHost`: the host operations of one context, served by a handle on it. */
export class CapabilityHostRpcTarget extends RpcTarget {
  readonly #itx: ItxRpcTarget;

  constructor(itx: ItxRpcTarget) {
    super();
    this.#itx = itx;
  }

  async path(): Promise<string> {
    return (await this.#itx.whoami()).path;
  }

  __describe() {
    return this.#itx.__describe();
  }

  provideCapability(input: Parameters<ItxRpcTarget["provideCapability"]>[0]) {
    return this.#itx.provideCapability(input);
  }

  revokeCapability(input: Parameters<ItxRpcTarget["revokeCapability"]>[0]) {
    return this.#itx.revokeCapability(input);
  }

  invokeCapability(input: Parameters<ItxRpcTarget["invokeCapability"]>[0]) {
    return this.#itx.invokeCapability(input);
  }

  /** `async (itx) => { ... }` in this context's scope. */
  runScript(code: unknown, options?: { timeoutMs?: unknown }) {
    return this.#itx.run(code, options);
  }
}
installInvokeFallback(CapabilityHostRpcTarget);

/** `itx.capabilityHosts`: any context's host in the handle's project (`get("/")` mounts project-wide). */
export class CapabilityHostsRpcTarget extends RpcTarget {
  readonly #open: (path: unknown) => ItxRpcTarget;

  constructor(open: (path: unknown) => ItxRpcTarget) {
    super();
    this.#open = open;
  }

  get(path: unknown): CapabilityHostRpcTarget {
    return new CapabilityHostRpcTarget(this.#open(path));
  }
}
