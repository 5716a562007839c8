/** How often streamed reply text is sent to live viewers as one ephemeral frame. */
export const FRAME_INTERVAL_MS = 50;

/**
 * Batches streamed reply text into frames, at most one per `intervalMs`, sent in order. Frames are
 * for live viewers only: a send that fails loses nothing the stream keeps.
 */
export class FrameSender {
  readonly #send: (delta: string, index: number) => Promise<unknown>;
  readonly #intervalMs: number;
  #buffer = "";
  #index = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  #done = false;

  constructor(send: (delta: string, index: number) => Promise<unknown>, intervalMs: number = FRAME_INTERVAL_MS) {
    this.#send = send;
    this.#intervalMs = intervalMs;
  }

  push(delta: string): void {
    if (this.#done) return;
    this.#buffer += delta;
    this.#timer ??= setTimeout(() => this.#flush(), this.#intervalMs);
  }

  /**
   * Stops sending and answers the text not yet sent with its frame index, once the frames before
   * it went out: the caller appends it beside other events. Nothing is sent after this.
   */
  async takeRest(): Promise<{ delta: string; index: number } | undefined> {
    this.#stop();
    await this.#chain;
    if (this.#buffer.length === 0) return undefined;
    const rest = { delta: this.#buffer, index: this.#index++ };
    this.#buffer = "";
    return rest;
  }

  /** Sends what is left and answers once every frame went out (or failed). */
  async close(): Promise<void> {
    this.#stop();
    this.#flush();
    await this.#chain;
  }

  #stop(): void {
    this.#done = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #flush(): void {
    this.#timer = undefined;
    if (this.#buffer.length === 0) return;
    const delta = this.#buffer;
    const index = this.#index++;
    this.#buffer = "";
    this.#chain = this.#chain.then(() => this.#send(delta, index)).catch(() => undefined);
  }
}
