import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";
import { hostStub } from "../capability-host/host-stub.ts";
import { logUncoded } from "../logging/log-limiter.ts";
import { HeldRunner } from "../worker-loader/runner-client.ts";

/**
 * One client connection to /api. Everything vended on it can register cleanup that runs when the
 * client goes away: the WebSocket closing, or an HTTP batch finishing. Live capabilities (provided
 * over this connection) use it to announce that they are gone.
 */
export class Connection {
  readonly id = crypto.randomUUID();
  readonly transport: "websocket" | "http-batch";
  #closed = false;
  #authenticated = false;
  #onClose: Array<() => void> = [];
  readonly #waitUntil: (promise: Promise<unknown>) => void;
  readonly #liveHosts = new Set<string>();

  readonly #end: ((reason: string) => void) | undefined;
  /** Scripts run over this connection share one open session into the runner (local OS only), closed with it. */
  readonly runner = new HeldRunner();

  constructor(
    transport: "websocket" | "http-batch",
    waitUntil: (promise: Promise<unknown>) => void = () => undefined,
    end?: (reason: string) => void,
  ) {
    this.transport = transport;
    this.#waitUntil = waitUntil;
    this.#end = end;
    this.onClose(() => this.runner.close());
  }

  /** Ends the connection from the server's side (a revoked credential): the client's session breaks. */
  terminate(reason: string): void {
    try {
      this.#end?.(reason);
    } finally {
      this.close();
    }
  }

  /**
   * Remembers that a live capability was provided to this context over this connection: when the
   * connection ends, the context's host marks every such mount disconnected.
   */
  /** Refuses a live provide to one more context once CONNECTION_LIVE_CONTEXTS_MAX are tracked. */
  assertMayTrack(projectId: string, path: string): void {
    if (this.#liveHosts.has(`${projectId}:${path}`) || this.#liveHosts.size < LIMITS.CONNECTION_LIVE_CONTEXTS_MAX) return;
    throw new ItxError("INVALID_ARGUMENT", `one connection provides live capabilities to at most ${LIMITS.CONNECTION_LIVE_CONTEXTS_MAX} contexts`, {
      details: limitDetails("CONNECTION_LIVE_CONTEXTS_MAX"),
    });
  }

  trackLiveProvide(env: Env, projectId: string, path: string): void {
    const key = `${projectId}:${path}`;
    if (this.#liveHosts.has(key)) return;
    this.#liveHosts.add(key);
    this.onClose(() => {
      this.#waitUntil(
        hostStub(env, projectId, path)
          .disconnectConnection(this.id)
          .catch((error: unknown) => logUncoded("could not disconnect live capabilities", error)),
      );
    });
  }

  /** True once `authenticate()` has succeeded on this connection: the message budget relaxes. */
  get authenticated(): boolean {
    return this.#authenticated;
  }

  markAuthenticated(): void {
    this.#authenticated = true;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Runs `callback` once when the connection ends (at once if it already has). */
  onClose(callback: () => void): void {
    if (this.#closed) callback();
    else this.#onClose.push(callback);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const callback of this.#onClose.splice(0)) {
      try {
        callback();
      } catch (error) {
        logUncoded("connection close callback failed", error);
      }
    }
  }
}
