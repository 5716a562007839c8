// Limits on untrusted code: scripts (`itx.run`, enqueued runs), stateless dynamic workers
// (`itx.workers.get`) and stateless source capabilities. One place, read by the Worker and by the
// local runner's watchdog (apps/os/scripts/runner-watchdog.ts), so this file imports nothing.
// docs/security.md ("Untrusted code") says what each one covers.

export const UNTRUSTED_LIMITS = {
  /**
   * CPU time one invocation of a Loader isolate may use, passed as the Loader's `limits.cpuMs` on
   * every road. Cloudflare enforces it in a deployment; local workerd accepts and ignores it, which
   * is why untrusted code runs in the runner process locally (RUNNER_HANG_MS below).
   */
  CPU_MS: 5_000,
  /**
   * Wall-clock time the OS waits for one call into a stateless dynamic worker or source capability
   * in the runner before it answers TIMEOUT (scripts use LIMITS.TIMEOUT_MS, limits.ts). Runner calls
   * never time out by themselves: without it a call into a runner that lost its isolate waits forever.
   */
  CALL_TIMEOUT_MS: 30_000,
  /**
   * How much longer than a call's own deadline the OS waits for the runner's answer (the runner
   * keeps the deadline itself): a runner too busy to answer in time is being killed anyway.
   */
  RUNNER_DEADLINE_GRACE_MS: 1_000,
  /**
   * How long a call waits for a runner that is not reachable (restarting after a kill, ~2.5 s)
   * before it fails with UNAVAILABLE. Nothing has started in the runner while it waits.
   */
  RUNNER_WAIT_MS: 15_000,
  /**
   * After a call outlived its deadline (code it left may still run: a timer chain yields, so the
   * hang check never fires), the runner takes no new calls and is replaced once its other calls
   * end, or after this long at most, when the calls still in flight are stopped with it.
   */
  RUNNER_DRAIN_MAX_MS: 10_000,
  /**
   * A runner that starts to drain tells the OS on every session held into it (so the OS sends
   * nothing more there), and reports itself drained only once each has heard, or this long after
   * the drain began. Without it, a runner asked to drain while idle was replaced at once, and the
   * next call on a held session, sent before the OS saw the process go, was taken for a call the
   * runner died under (RESOURCE_EXHAUSTED).
   */
  RUNNER_DRAIN_NOTICE_MS: 1_000,
  /** How often the watchdog asks the runner for /health. */
  RUNNER_HEALTH_INTERVAL_MS: 250,
  /**
   * A runner whose /health has not answered for this long is held by code that does not yield
   * (an endless loop, a backtracking regex, a microtask chain, a huge fill): the watchdog kills its
   * process group and starts a new one. Locally this is the longest one uninterrupted slice of
   * untrusted CPU can hold the runner (never the OS, which runs in another process); it is not
   * shorter because a busy machine must not get a healthy runner killed.
   */
  RUNNER_HANG_MS: 2_000,
  /**
   * Heap one runner isolate may grow to (V8's --max-old-space-size, in MB). Past it V8 stops the
   * whole runner process ("Reached heap limit"); the watchdog sees it exit and starts a new one.
   */
  RUNNER_HEAP_MB: 512,
  /**
   * Resident memory the runner's processes may hold together (MB), read from /proc by the watchdog
   * with each health poll: past it the runner is replaced. It bounds what the heap limit does not
   * (many isolates, array buffers). An address-space cap (prlimit --as) cannot do this: every
   * isolate reserves gigabytes of address space, and the runner died at its ~20th isolate under 64 GiB.
   */
  RUNNER_RSS_MAX_MB: 2_048,
  /**
   * Resident memory (MB) past which the watchdog asks the runner to drain once idle: it keeps
   * taking calls, and at the first moment none is in flight it takes no more (the OS waits for the
   * next runner) and is replaced. Loader isolates are kept for as long as the process lives (about
   * 1.8 MB per distinct script), so a busy runner grows; this replaces it between calls instead of
   * killing it mid-call at RUNNER_RSS_MAX_MB, which stays the backstop for a runner never idle.
   */
  RUNNER_RSS_RECYCLE_MB: 1_536,
  /**
   * Bodies up to this size (a request whose content-length says so, a response likewise) cross
   * between the runner and the OS as bytes in one RPC, not as a stream pumped across the processes:
   * the stream costs round trips of its own. Larger or unknown lengths keep streaming.
   */
  RUNNER_EGRESS_INLINE_MAX_BYTES: 65_536,
} as const;
