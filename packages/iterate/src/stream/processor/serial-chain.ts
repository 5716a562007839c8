/**
 * Runs async work strictly one item after another, in the order it was queued. Each processor
 * has one, so that deliveries, catch-ups and revivals never interleave inside a processor.
 */
export class SerialChain {
  #tail: Promise<void> = Promise.resolve();
  #pending = 0;

  /** Queues `work` behind everything queued before it and answers its result. */
  run<T>(work: () => Promise<T>): Promise<T> {
    this.#pending++;
    const result = this.#tail.then(work);
    const done = () => {
      this.#pending--;
    };
    this.#tail = result.then(done, done);
    return result;
  }

  /** True when nothing is queued or running. */
  get idle(): boolean {
    return this.#pending === 0;
  }

  /** Resolves once nothing is queued or running, including work queued while waiting. */
  async whenIdle(): Promise<void> {
    while (this.#pending > 0) await this.#tail;
  }
}
