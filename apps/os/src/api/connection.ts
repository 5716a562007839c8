/**
 * One client connection to /api. Everything vended on it can register cleanup that runs when the
 * client goes away: the WebSocket closing, or an HTTP batch finishing. Live capabilities (provided
 * over this connection) use it to announce that they are gone.
 */
export class Connection {
  readonly id = crypto.randomUUID();
  readonly transport: "websocket" | "http-batch";
  #closed = false;
  #onClose: Array<() => void> = [];

  constructor(transport: "websocket" | "http-batch") {
    this.transport = transport;
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
        console.error("connection close callback failed", error);
      }
    }
  }
}
