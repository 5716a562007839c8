import { RpcTarget } from "cloudflare:workers";
import { ItxError, errorMessage } from "iterate/errors";
import type { DirectEgressVerdict, LentToken, RunnerAnswer, RunnerCall, RunnerLoad } from "../runner/runner-protocol.ts";
import type { RunnerEntrypoint } from "../runner/runner-worker.ts";
import type { IsolateProps } from "./isolate-props.ts";
import { UNTRUSTED_LIMITS } from "./untrusted-limits.ts";
import { raceDeadline } from "../limits/deadline.ts";
import { releaseAnswer } from "./runner-answer-release.ts";

/** The OS's binding to the runner (set only by the local OS: apps/os/scripts/local-os.ts). */
export type RunnerBinding = Service<RunnerEntrypoint>;

/** What a call into the runner is sent on: the binding itself, or a session held open on it (HeldRunner). */
export type RunnerRoad = Pick<RunnerBinding, "runScript" | "invoke" | "revokeDirectEgress">;

type OpenSession = RunnerRoad & Disposable;

// The scopes lent to calls in flight in the runner, by token. Plain data: the callback that reads
// one runs in a request context of its own.
const lent = new Map<LentToken, IsolateProps>();

/** Lends `props` for the length of `work`: the runner's callbacks for that call name the token (exported for tests). */
export async function lending<T>(props: IsolateProps, work: (token: LentToken) => Promise<T>): Promise<T> {
  const token = crypto.randomUUID() + crypto.randomUUID();
  lent.set(token, props);
  try {
    return await work(token);
  } finally {
    lent.delete(token);
  }
}

/** The props lent under `token`, while its call runs; PERMISSION_DENIED after. */
export function borrowed(token: unknown): IsolateProps {
  const props = typeof token === "string" ? lent.get(token) : undefined;
  if (!props) throw new ItxError("PERMISSION_DENIED", "this code's call has ended: its itx and egress ended with it");
  return props;
}

/**
 * Makes one call into the runner and answers what the loaded code answered (failures as values).
 * The runner keeps the call's deadline itself (its answer ends the call, and the timers the code
 * left with it); the OS waits RUNNER_DEADLINE_GRACE_MS longer, for a runner too busy to answer.
 * Throws a coded error when the code did not answer:
 * - TIMEOUT past the deadline;
 * - RESOURCE_EXHAUSTED when the runner died under the call (the watchdog killed it for holding
 *   the CPU past RUNNER_HANG_MS, or V8 stopped it at its heap limit); never retried;
 * - UNAVAILABLE when no runner was reachable for RUNNER_WAIT_MS (nothing started).
 * With `held`, the call travels on that caller's open session (see HeldRunner), else on a
 * connection of its own.
 */
export async function callRunner(
  runner: RunnerBinding,
  call: (runner: RunnerRoad) => Promise<RunnerAnswer>,
  deadlineMs: number,
  what: string,
  held?: HeldRunner,
): Promise<RunnerAnswer> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    // Waiting for a runner does not count against the call's own deadline: nothing runs meanwhile.
    if (runnerReplaced) await waitForRunner(runner, started);
    const waitedMs = Date.now() - started;
    const session = held?.session(runner);
    const sent = call(session ?? runner);
    // Once it arrives (past the deadline too), the answer keeps nothing open on its connection.
    sent.then(releaseAnswer, () => undefined);
    const outcome = await withDeadline(sent, deadlineMs + UNTRUSTED_LIMITS.RUNNER_DEADLINE_GRACE_MS);
    // A session that did not answer, or whose runner now drains, is not used again.
    if (session && (outcome.kind !== "answered" || (!outcome.answer.ok && ("deadline" in outcome.answer || "refused" in outcome.answer)))) held?.drop(session);
    if (outcome.kind === "timeout" || (outcome.kind === "answered" && !outcome.answer.ok && "deadline" in outcome.answer)) {
      // A runner that answered a deadline drains and is replaced: later calls wait for the next one.
      runnerReplaced = true;
      throw new ItxError("TIMEOUT", `${what} ran past its ${deadlineMs} ms deadline and was stopped`, { details: { timeoutMs: deadlineMs } });
    }
    if (outcome.kind === "answered" && !outcome.answer.ok && "refused" in outcome.answer) {
      // Nothing ran: the runner drains before its replacement. Wait for the next one.
      runnerReplaced = true;
      if (waitedMs > UNTRUSTED_LIMITS.RUNNER_WAIT_MS) throw new ItxError("UNAVAILABLE", `the runner that runs untrusted code is being replaced (waited ${waitedMs} ms)`);
      continue;
    }
    if (outcome.kind === "answered") return outcome.answer;
    const message = errorMessage(outcome.error);
    if (!isUnreachable(message)) {
      runnerReplaced = true;
      throw new ItxError(
        "RESOURCE_EXHAUSTED",
        `${what} was stopped: the runner it ran in died (code there held the CPU past ${UNTRUSTED_LIMITS.RUNNER_HANG_MS} ms without yielding, or exhausted memory); it is not run again (${message.slice(0, 120)})`,
        { details: { reason: RUNNER_DIED } },
      );
    }
    if (waitedMs > UNTRUSTED_LIMITS.RUNNER_WAIT_MS) {
      throw new ItxError("UNAVAILABLE", `the runner that runs untrusted code is not reachable (waited ${waitedMs} ms): ${message.slice(0, 200)}`);
    }
    await new Promise((done) => setTimeout(done, Math.min(100 * 2 ** attempt, 1_000)));
  }
}

/**
 * A session into the runner held open for one caller that lives long: a Cap'n Web connection,
 * a Durable Object. A call on the RUNNER binding opens a connection of its own through the dev
 * registry (about 0.9 ms more than a call on an open one, measured from a Durable Object); calls
 * on a held session skip that. Callbacks into what a call hands the runner (a script's itx) run
 * in the request that opened the session, so a session serves only the owner that opened it,
 * and ends with it (`close`).
 *
 * The runner holds a watch for as long as the session lives: when its process is gone, the
 * watch is disposed here and the session dropped, so a call after a runner died while idle opens
 * a new session (and waits for the next runner, as a call on the binding does) instead of being
 * taken for a call the runner died under. A call sent in the instant between a death and its
 * notice is still taken for one (RESOURCE_EXHAUSTED, never retried): the safe side for code that
 * may have killed the runner.
 */
export class HeldRunner {
  #open: OpenEntry | undefined;
  #closed = false;

  /** The open session (opened now if none is: pipelined with the first call on it), or none once closed. */
  session(runner: RunnerBinding): RunnerRoad | undefined {
    if (this.#closed) return undefined;
    if (this.#open?.alive) return this.#open.stub;
    const entry: OpenEntry = { stub: undefined as unknown as OpenSession, alive: true, released: false };
    // The session ended (its runner is gone, or it was released): never used again, and let go.
    // Its runner drains: nothing more is sent on it; it is let go when the runner is gone.
    const watch = new SessionWatch(
      () => this.#forget(entry),
      () => this.#retire(entry),
    );
    entry.stub = runner.session(watch) as unknown as OpenSession;
    this.#open = entry;
    return entry.stub;
  }

  /** Forgets `session` (it failed, or its runner drains): the next call opens another. */
  drop(session: RunnerRoad): void {
    const open = this.#open;
    if (open?.stub === session) this.#forget(open);
  }

  /** Lets the held session go (its owner is idle): the next call opens another. */
  release(): void {
    const open = this.#open;
    if (open) this.#forget(open);
  }

  /** Ends the held session for good: its owner ended. Later calls go on the binding. */
  close(): void {
    this.#closed = true;
    const open = this.#open;
    if (open) this.#forget(open);
  }

  // Its runner drains: calls wait for the next runner (a session opened now would reach the
  // draining one, which may be gone before the call arrives).
  #retire(entry: OpenEntry): void {
    entry.alive = false;
    if (this.#open === entry) this.#open = undefined;
    runnerReplaced = true;
  }

  #forget(entry: OpenEntry): void {
    entry.alive = false;
    if (this.#open === entry) this.#open = undefined;
    if (entry.released) return;
    entry.released = true;
    release(entry.stub);
  }
}

interface OpenEntry {
  stub: OpenSession;
  alive: boolean;
  released: boolean;
}

// The runner holds this for a session's life. Its disposal says the session ended (released, or
// the runner's process is gone); `draining` says the runner takes no more calls and will be
// replaced: calls in flight on the session finish, and no new one is sent there.
class SessionWatch extends RpcTarget {
  readonly #ended: () => void;
  readonly #draining: () => void;

  constructor(ended: () => void, draining: () => void) {
    super();
    this.#ended = ended;
    this.#draining = draining;
  }

  draining(): void {
    this.#draining();
  }

  [Symbol.dispose](): void {
    this.#ended();
  }
}

function release(stub: OpenSession): void {
  // A pipelined session that never opened has nothing to release.
  void Promise.resolve(stub)
    .then((opened) => opened[Symbol.dispose]?.())
    .catch(() => undefined);
}

/** `details.reason` of the RESOURCE_EXHAUSTED a call answers when the runner died under it. */
export const RUNNER_DIED = "runner-died";

// Set when a call saw the runner die or start draining: until one answers again, calls first make
// sure the next runner is up (a call sent to a dead one cannot tell "never started" from "died running").
let runnerReplaced = false;

async function waitForRunner(runner: RunnerBinding, started: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const outcome = await withDeadline(
      runner.ping().then((state): RunnerAnswer => ({ ok: true, value: state })),
      1_000,
    );
    if (outcome.kind === "answered" && outcome.answer.ok && outcome.answer.value === "ready") {
      runnerReplaced = false;
      return;
    }
    const waitedMs = Date.now() - started;
    if (waitedMs > UNTRUSTED_LIMITS.RUNNER_WAIT_MS) {
      throw new ItxError("UNAVAILABLE", `the runner that runs untrusted code is restarting and did not answer within ${waitedMs} ms`);
    }
    await new Promise((done) => setTimeout(done, Math.min(100 * 2 ** attempt, 500)));
  }
}

/**
 * Runs a prepared script module's `run(itx)` in the runner, handing it `itx`. `direct` is the run's
 * direct-egress verdict; `valid` is asked again at each send, so a call sent again after a
 * revocation (it waited for the next runner) goes without one.
 */
export function runnerRunScript(
  runner: RunnerBinding,
  load: RunnerLoad,
  props: IsolateProps,
  itx: unknown,
  timeoutMs: number,
  direct?: { verdict: DirectEgressVerdict | undefined; valid: (verdict: DirectEgressVerdict | undefined) => DirectEgressVerdict | undefined },
  held?: HeldRunner,
): Promise<RunnerAnswer> {
  return lending(props, (token) => callRunner(runner, (stub) => stub.runScript(load, itx, token, timeoutMs, direct?.valid(direct.verdict)), timeoutMs, "the script", held));
}

/**
 * Calls a member of an entrypoint loaded in the runner; the code's own failure is rethrown with its
 * code. With `held`, the call travels on that caller's open session (see HeldRunner). `direct` is
 * the call's direct-egress verdict, asked again at each send as a run's is (runnerRunScript).
 */
export async function runnerInvoke(
  runner: RunnerBinding,
  load: RunnerLoad,
  call: RunnerCall,
  props: IsolateProps,
  held?: HeldRunner,
  direct?: { verdict: DirectEgressVerdict | undefined; valid: (verdict: DirectEgressVerdict | undefined) => DirectEgressVerdict | undefined },
): Promise<unknown> {
  const what = `the call of ${call.path.join(".")}`;
  const timeoutMs = UNTRUSTED_LIMITS.CALL_TIMEOUT_MS;
  const answer = await lending(props, (token) => callRunner(runner, (stub) => stub.invoke(load, call, token, timeoutMs, direct?.valid(direct.verdict)), timeoutMs, what, held));
  if (answer.ok) return answer.value;
  throw answerError(answer.error);
}

/** A failure the loaded code raised, as an Error carrying its code (when it had one). */
export function answerError(error: { message: string; code?: string }): Error {
  return Object.assign(new Error(error.message), error.code === undefined ? {} : { code: error.code });
}

type Outcome = { kind: "answered"; answer: RunnerAnswer } | { kind: "failed"; error: unknown } | { kind: "timeout" };

function withDeadline(promise: Promise<RunnerAnswer>, ms: number): Promise<Outcome> {
  const settled = promise.then(
    (answer): Outcome => ({ kind: "answered", answer }),
    (error: unknown): Outcome => ({ kind: "failed", error }),
  );
  return raceDeadline(settled, ms, (): Outcome => ({ kind: "timeout" }));
}

// A call that never reached a runner (none registered yet, or its address is gone) can wait for
// the next one; a call that was in flight when the runner died cannot, or a poison pill would run again.
function isUnreachable(message: string): boolean {
  return /^Worker "[^"]+" not found\. Make sure it is running locally|couldn't find a local dev session|ECONNREFUSED|connection refused/i.test(message);
}
