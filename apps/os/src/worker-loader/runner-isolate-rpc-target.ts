import { RpcTarget } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import { RESERVED_PATH_SEGMENTS } from "../capability-host/capability-path.ts";
import { installInvokeFallback } from "../itx/invoke-fallback.ts";
import type { RunnerCall, RunnerLoad } from "../runner/runner-protocol.ts";
import type { IsolateProps } from "./isolate-props.ts";
import { stillValid, type KeptVerdict } from "../egress/direct-egress-verdict.ts";
import { runnerInvoke, type HeldRunner, type RunnerBinding } from "./runner-client.ts";
import { scrubbedCall } from "./scrubbed-call.ts";

/**
 * A handle on a stateless dynamic worker that lives in the runner: a stub on an isolate of another
 * process cannot be handed out, so every method called on this target (`fetch` included) is one
 * call into the runner, lending the worker its context's itx and egress for that call. What it
 * answers or throws passes the secret scrub of that context (scrubbed-call.ts).
 */
export class RunnerIsolateRpcTarget extends RpcTarget {
  readonly #runner: RunnerBinding;
  readonly #load: RunnerLoad;
  readonly #call: Omit<RunnerCall, "path" | "args">;
  readonly #props: IsolateProps;
  readonly #held: HeldRunner | undefined;
  readonly #direct: KeptVerdict | undefined;

  /**
   * `held`: the session of the connection or Durable Object that made this handle, for its calls
   * (see HeldRunner). `direct`: the handle's direct-egress verdict (decision 0017), when its maker
   * can ask for one; without it the worker's fetches all take the OS's pipe.
   */
  constructor(runner: RunnerBinding, load: RunnerLoad, call: Omit<RunnerCall, "path" | "args">, props: IsolateProps, held?: HeldRunner, direct?: KeptVerdict) {
    super();
    this.#held = held;
    this.#direct = direct;
    this.#runner = runner;
    this.#load = load;
    this.#call = call;
    this.#props = props;
  }

  invokeCapability(input: { path: string[]; args: unknown[] }): Promise<unknown> {
    return scrubbedCall(this.#props, async () => {
      const verdict = await this.#direct?.current();
      return invokeInRunner(this.#runner, this.#load, { ...this.#call, path: input.path, args: input.args }, this.#props, this.#held, { verdict, valid: stillValid });
    });
  }
}
installInvokeFallback(RunnerIsolateRpcTarget);

/** Calls `call.path` on an entrypoint loaded in the runner, after the checks `callMembers` makes in process. */
export function invokeInRunner(runner: RunnerBinding, load: RunnerLoad, call: RunnerCall, props: IsolateProps, held?: HeldRunner, direct?: Parameters<typeof runnerInvoke>[5]): Promise<unknown> {
  if (call.path.length === 0) throw new ItxError("NOT_FOUND", "call one of this capability's methods");
  for (const segment of call.path) {
    if (RESERVED_PATH_SEGMENTS.has(segment)) throw new ItxError("INVALID_ARGUMENT", `"${segment}" is reserved`);
  }
  return runnerInvoke(runner, load, call, props, held, direct);
}
