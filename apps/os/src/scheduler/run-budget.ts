/**
 * A token bucket: `rate` admissions a minute on average, at most `burst` at once. Kept in memory by
 * the project's object (ProjectDurableObject.admitScheduledRun): an eviction refills it, which only
 * ever admits a burst early.
 */
export class RunBudget {
  readonly #rate: () => number;
  #tokens: number | undefined;
  #at = 0;

  /** `perMinute` is read at each admission (a limit a test may lower). */
  constructor(perMinute: () => number) {
    this.#rate = perMinute;
  }

  /** The most admitted at once: a tenth of a minute's rate, at least one. */
  static burstOf(perMinute: number): number {
    return Math.max(1, Math.ceil(perMinute / 10));
  }

  /** Takes one admission if there is one; answers whether it did. */
  admit(now = Date.now()): boolean {
    const perMinute = this.#rate();
    const burst = RunBudget.burstOf(perMinute);
    const tokens = this.#tokens === undefined ? burst : Math.min(burst, this.#tokens + ((now - this.#at) * perMinute) / 60_000);
    this.#at = now;
    if (tokens < 1) {
      this.#tokens = tokens;
      return false;
    }
    this.#tokens = tokens - 1;
    return true;
  }
}
