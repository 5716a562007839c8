import { errorMessage } from "iterate/errors";
import { hostStub } from "../capability-host/host-stub.ts";
import { isolateItx } from "../itx/itx-rpc-target.ts";
import type { IsolateProps } from "../worker-loader/isolate-props.ts";
import { runScript, type ScriptOutcome } from "../worker-loader/run-script.ts";
import type { HeldRunner } from "../worker-loader/runner-client.ts";
import type { Schedule } from "./scheduler-contract.ts";

/**
 * Runs one occurrence's script at the schedule's context, as an enqueued run would: as whoever set
 * the schedule (principal and origin, and that origin's jail if it is one, looked up now), never
 * as the context itself, so setting a schedule gives no more authority than running the script.
 * Locally the script runs in the runner process, under the same deadline and watchdog as any run,
 * on the scheduler's `held` session when it keeps one.
 */
export async function runOccurrence(env: Env, where: { projectId: string; path: string }, schedule: Schedule, held?: HeldRunner): Promise<ScriptOutcome> {
  const origin = schedule.setBy.origin;
  if (origin === undefined) {
    return { status: "failed", error: { code: "SCRIPT_FAILED", message: "this schedule does not say which context set it, so its script is not run" } };
  }
  let confinement;
  try {
    confinement = origin === "/" ? null : await hostStub(env, where.projectId, origin).confinement();
  } catch (error) {
    // Not knowing the setter's jail, the script does not run: it must never run with more than that.
    return { status: "failed", error: { code: "UNAVAILABLE", message: `the setter's confinement could not be read: ${errorMessage(error)}` } };
  }
  const props: IsolateProps = {
    principal: schedule.setBy.principal,
    projectId: where.projectId,
    origin,
    path: where.path,
    depth: 0,
    reaction: schedule.reaction,
    ...(confinement ? { confinement } : {}),
  };
  return runScript(env, props, isolateItx(env, props), schedule.script, held ? { held } : {});
}
