/**
 * Waits until Ctrl-C (SIGINT), SIGTERM, or until `arm`'s callback is called: how a following
 * command (`streams tail`, `agents chat`) ends cleanly, so it can unsubscribe and close.
 */
export function untilStopped(arm: (stop: () => void) => void): Promise<void> {
  return new Promise((done) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      done();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    arm(stop);
  });
}
