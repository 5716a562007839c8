/**
 * How long the harness waits for an OS it starts to answer, in milliseconds: the value of
 * `E2E_READY_TIMEOUT_MS` when it is set, else `fallback`. A loaded machine (several engineers
 * running suites that start OSes at once) can need more than the defaults; a CI runner may want
 * less, to fail fast. Anything but a positive whole number is refused rather than read as the
 * default, so a typo cannot quietly bring back the timeout it meant to change.
 *
 * @example
 * startLocalOs({ readyTimeoutMs: readyTimeoutMs(180_000) });
 */
export function readyTimeoutMs(fallback: number): number {
  const given = process.env.E2E_READY_TIMEOUT_MS;
  if (given === undefined || given.trim() === "") return fallback;
  const ms = Number(given);
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new Error(`E2E_READY_TIMEOUT_MS must be a positive whole number of milliseconds; it is "${given}"`);
  }
  return ms;
}
