import { RpcTarget } from "cloudflare:workers";

/**
 * What `provideCapability` answers. `revoke()` removes the mount; disposing the handle (`using`)
 * revokes only live mounts, since a durable mount must outlive the session that made it.
 */
export class CapabilityProvisionRpcTarget extends RpcTarget {
  readonly #path: string[];
  readonly #providedAtOffset: number;
  readonly #live: boolean;
  readonly #revoke: () => Promise<boolean>;
  readonly #sessionEnded: () => boolean;

  constructor(options: {
    path: string[];
    providedAtOffset: number;
    live: boolean;
    revoke: () => Promise<boolean>;
    /** True once the provider's connection closed: then the mount is marked disconnected, not revoked. */
    sessionEnded: () => boolean;
  }) {
    super();
    this.#path = options.path;
    this.#providedAtOffset = options.providedAtOffset;
    this.#live = options.live;
    this.#revoke = options.revoke;
    this.#sessionEnded = options.sessionEnded;
  }

  get path(): string[] {
    return [...this.#path];
  }

  get providedAtOffset(): number {
    return this.#providedAtOffset;
  }

  /** Removes this mount (not a later one at the same path). Answers whether it was still there. */
  revoke(): Promise<boolean> {
    return this.#revoke();
  }

  // Cap'n Web disposes every handle when a connection ends; that is a disconnect (the mount stays
  // listed, calls get CAPABILITY_DISCONNECTED), so only an explicit dispose revokes.
  [Symbol.dispose](): void {
    if (this.#live && !this.#sessionEnded()) this.#revoke().catch(() => false);
  }
}
