import { errorCode, errorMessage, ItxError } from "iterate/errors";
import { RESERVED_PATH_SEGMENTS } from "../capability-host/capability-path.ts";
import { builtLoad, loadBuilt } from "../worker-loader/dynamic-workers.ts";
import type { IsolateProps } from "../worker-loader/isolate-props.ts";
import { RUNNER_DIED, type HeldRunner } from "../worker-loader/runner-client.ts";
import { LIMITS } from "../limits.ts";
import { invokeInRunner } from "../worker-loader/runner-isolate-rpc-target.ts";
import type { BuiltWorker } from "../worker-loader/worker-build.ts";

/** Where a call on the project worker comes from, passed to it as its entrypoint's props. */
export interface ConfigCall {
  callerPath: string;
  projectSlug: string;
}

/** The path of the readiness probe: any Response from the worker's fetch counts as an answer. */
export const READINESS_PROBE_URL = "https://project.invalid/.well-known/iterate/ready";

/**
 * Calls `path` on the project worker `built`, loaded for the root context with `isolate`'s
 * authority: in the runner when the deployment has one (decision 0007), else in this process's Loader.
 */
export async function callConfigWorker(env: Env, built: BuiltWorker, isolate: IsolateProps, call: ConfigCall, path: string[], args: unknown[], held?: HeldRunner): Promise<unknown> {
  if (path.length === 0) throw new ItxError("NOT_FOUND", "call one of the project worker's methods");
  for (const segment of path) {
    if (RESERVED_PATH_SEGMENTS.has(segment)) throw new ItxError("INVALID_ARGUMENT", `"${segment}" is reserved`);
  }
  const props = { callerPath: call.callerPath, projectSlug: call.projectSlug };
  if (env.RUNNER) return invokeInRunner(env.RUNNER, builtLoad(built, isolate), { props, path, args }, isolate, held);
  let target: unknown = loadBuilt(env, built, isolate).getEntrypoint(undefined, { props });
  for (const segment of path.slice(0, -1)) target = (target as Record<string, unknown>)[segment];
  // Called as a member, never through Function.prototype.apply: on an RPC stub, apply would send
  // the stub itself as an argument.
  const holder = target as Record<string, (...args: unknown[]) => unknown>;
  const name = path.at(-1) as string;
  if (typeof holder[name] !== "function") throw new ItxError("NOT_FOUND", `the project worker has no method ${path.join(".")}`);
  return holder[name](...args);
}

/**
 * Loads the worker and asks its fetch for the readiness probe. A worker that does not load or
 * answer fails deterministically (INVALID_ARGUMENT); only the platform's unavailability is transient.
 * The runner is shared by every project, so a probe the runner died under is asked again, up to
 * PROJECT_PROBE_RUNNER_DEATHS_MAX times: another project's code may have killed it, and a probe
 * is only a GET that any Response answers.
 */
export async function probeConfigWorker(env: Env, built: BuiltWorker, isolate: IsolateProps, call: ConfigCall, held?: HeldRunner): Promise<void> {
  let answer: unknown;
  for (let deaths = 0; ; ) {
    try {
      answer = await callConfigWorker(env, built, isolate, call, ["fetch"], [new Request(READINESS_PROBE_URL)], held);
      break;
    } catch (error) {
      const code = errorCode(error);
      if (code === "UNAVAILABLE" || code === "CAPABILITY_DISCONNECTED") throw error;
      if (code === "RESOURCE_EXHAUSTED" && runnerDied(error) && ++deaths < LIMITS.PROJECT_PROBE_RUNNER_DEATHS_MAX) continue;
      const after = deaths > 0 ? ` (the runner died under ${deaths} probes; PROJECT_PROBE_RUNNER_DEATHS_MAX)` : "";
      throw new ItxError("INVALID_ARGUMENT", `the worker did not answer its readiness probe${after}: ${errorMessage(error)}`, { details: { reason: "probe-failed" } });
    }
  }
  if (!(answer instanceof Response)) {
    throw new ItxError("INVALID_ARGUMENT", "the worker's fetch did not answer a Response to its readiness probe", { details: { reason: "probe-failed" } });
  }
  await answer.body?.cancel();
}

function runnerDied(error: unknown): boolean {
  return error instanceof ItxError && (error.details as { reason?: unknown } | undefined)?.reason === RUNNER_DIED;
}
