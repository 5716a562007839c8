import { RpcTarget } from "cloudflare:workers";

/** What `itx.egress` needs from its handle. */
export interface EgressHost {
  fetch(input: unknown, init?: unknown): Promise<Response>;
  provideCapability(input: { name: string; capability: unknown; instructions?: string }): Promise<{ revoke(): Promise<boolean> }>;
}

/**
 * `itx.egress`: the egress road of a context. `fetch` is the same road as `itx.fetch`.
 * `intercept(handler)` mounts a live `fetch` shadow on this context (the latest one wins); the
 * handler sees requests with placeholders, never material. `release()` removes it.
 */
export class EgressRpcTarget extends RpcTarget {
  readonly #host: EgressHost;

  constructor(host: EgressHost) {
    super();
    this.#host = host;
  }

  fetch(input: unknown, init?: unknown): Promise<Response> {
    return this.#host.fetch(input, init);
  }

  async intercept(handler: unknown): Promise<EgressInterceptionRpcTarget> {
    const provision = await this.#host.provideCapability({
      name: "fetch",
      capability: handler,
      instructions: "An egress interceptor: outbound requests of this context (and its children) go here.",
    });
    return new EgressInterceptionRpcTarget(() => provision.revoke());
  }
}

export class EgressInterceptionRpcTarget extends RpcTarget {
  readonly #release: () => Promise<boolean>;

  constructor(release: () => Promise<boolean>) {
    super();
    this.#release = release;
  }

  /** Removes the interceptor; requests take the road they took before it. */
  release(): Promise<boolean> {
    return this.#release();
  }
}
