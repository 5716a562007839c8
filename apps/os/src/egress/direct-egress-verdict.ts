import { errorCode } from "iterate/errors";
import { hostStub } from "../capability-host/host-stub.ts";
import type { DirectEgressVerdict } from "../runner/runner-protocol.ts";
import type { IsolateProps } from "../worker-loader/isolate-props.ts";
import { callRunner } from "../worker-loader/runner-client.ts";
import { UNTRUSTED_LIMITS } from "../worker-loader/untrusted-limits.ts";

// The OS's side of the runner's direct egress (decision 0017). A script's bare fetch() may leave
// from the runner itself when it carries no placeholder and nothing on its context's chain
// shadows `fetch`. The OS says the latter, once per run, as a verdict; a `fetch` provided anywhere
// voids every verdict made before it, before the provide answers.
//
// The floor: a verdict made at floor F holds while the floor is still F. It only rises (a clock
// reading, so an OS restarted beside a runner that outlived it starts above what it had sent).
let floor = Date.now();

/** Whether a mount at `path` can shadow `fetch` (a mount answers its path and everything below it). */
export function shadowsFetch(path: readonly string[]): boolean {
  return path.length === 0 || path[0] === "fetch";
}

/**
 * The verdict for a run of code with `props`, or undefined when its fetches must take the OS's
 * pipe: no runner, code in a jail (the pipe checks its `fetch` grant), or a `fetch` shadow on its
 * chain (or no answer about one). Never rejects. `provides` asks the context's capability host
 * (by default through its stub; the host itself answers in place).
 */
export async function directEgressVerdict(
  env: Env,
  props: IsolateProps,
  provides: (path: string[]) => Promise<boolean> = (path) => hostStub(env, props.projectId, props.path ?? props.origin).provides(path),
): Promise<DirectEgressVerdict | undefined> {
  if (!env.RUNNER || props.confinement) return undefined;
  // Read before the question: a provide that lands after it raises the floor past this epoch.
  const epoch = floor;
  try {
    const shadowed = await provides(["fetch"]);
    return shadowed ? undefined : { epoch, policy: env.EGRESS_ALLOW_PRIVATE_ADDRESSES ?? "" };
  } catch {
    return undefined;
  }
}

/**
 * A verdict kept for the calls of one handle that lives long (a dynamic worker's): made at the
 * first call, and made again only once a `fetch` provide raised the floor since. Each call still
 * sends it through `stillValid`, so one made while a provide landed is never sent.
 */
export class KeptVerdict {
  readonly #make: () => Promise<DirectEgressVerdict | undefined>;
  #made: { floor: number; verdict: Promise<DirectEgressVerdict | undefined> } | undefined;

  constructor(make: () => Promise<DirectEgressVerdict | undefined>) {
    this.#make = make;
  }

  /** The verdict for a call starting now. */
  current(): Promise<DirectEgressVerdict | undefined> {
    if (this.#made === undefined || this.#made.floor !== floor) this.#made = { floor, verdict: this.#make() };
    return this.#made.verdict;
  }
}

/** Contexts `knownShadowFree` remembers at most (the oldest is forgotten first). */
export const SHADOW_FREE_KEPT_MAX = 1_024;

// Contexts whose chain shadowed no `fetch` when last asked, by key, with the floor they were asked at.
const shadowFree = new Map<string, number>();

/**
 * Whether the chain of the context under `key` was found to shadow no `fetch` since the floor last
 * rose, so that an `itx.fetch` there may go to the pipe without asking again. Only where verdicts
 * hold at all (a local OS with its runner: the floor lives in the one isolate every provide runs in).
 */
export function knownShadowFree(env: Env, key: string): boolean {
  return env.RUNNER !== undefined && shadowFree.get(key) === floor;
}

/** The floor now: read before asking a chain, and handed to `noteShadowFree` with its answer. */
export function revocationFloor(): number {
  return floor;
}

/** Remembers what the chain under `key` answered when asked at `askedAt`; only a shadow-free answer with no provide since is kept. */
export function noteShadowFree(env: Env, key: string, askedAt: number, shadowed: boolean): void {
  shadowFree.delete(key);
  if (env.RUNNER === undefined || shadowed || askedAt !== floor) return;
  shadowFree.set(key, askedAt);
  if (shadowFree.size > SHADOW_FREE_KEPT_MAX) shadowFree.delete(shadowFree.keys().next().value as string);
}

/** The verdict as it may be sent now: undefined once a provide raised the floor past it. */
export function stillValid(verdict: DirectEgressVerdict | undefined): DirectEgressVerdict | undefined {
  return verdict && verdict.epoch >= floor ? verdict : undefined;
}

/**
 * A `fetch` shadow was provided somewhere: voids every verdict made so far, here (calls not yet
 * sent drop theirs, see `stillValid`) and in the runner (calls in flight, and calls on their way),
 * and answers once the runner has it. A runner that cannot be reached holds no call that could use
 * an old verdict: calls in flight die with it, and calls sent again are checked again here.
 */
export async function revokeDirectEgress(env: Env): Promise<void> {
  floor = Math.max(Date.now(), floor + 1);
  const runner = env.RUNNER;
  if (!runner) return;
  const raised = floor;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await callRunner(runner, (stub) => stub.revokeDirectEgress(raised), UNTRUSTED_LIMITS.CALL_TIMEOUT_MS, "revoking direct egress");
      return;
    } catch (error) {
      // UNAVAILABLE: no runner came up within RUNNER_WAIT_MS, so none holds a verdict.
      if (errorCode(error) === "UNAVAILABLE") return;
      // RESOURCE_EXHAUSTED or TIMEOUT: the runner died or was replaced under the call; tell the next one.
    }
  }
  // Three runners died or timed out under the call: each of those was killed with its calls (the
  // watchdog logs that), and calls sent again are checked against the floor here.
}
