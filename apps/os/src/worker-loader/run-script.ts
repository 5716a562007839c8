import { exports } from "cloudflare:workers";
import { ItxError, errorCode, errorMessage } from "iterate/errors";
import { raceDeadline } from "../limits/deadline.ts";
import { directEgressVerdict, stillValid } from "../egress/direct-egress-verdict.ts";
import { watchMaterials, type MaterialWatch } from "../egress/materials-in-use.ts";
import type { DirectEgressVerdict } from "../runner/runner-protocol.ts";
import { scrubJsonValue, scrubText } from "../egress/secret-scrub.ts";
import { keptScrubPatterns } from "./scrubbed-call.ts";
import { isolateAuthorityKey, isolateScopeKey, reactionKey, type IsolateProps } from "./isolate-props.ts";
import { PreparedScripts } from "./prepared-scripts.ts";
import { SCRIPT_LINE_OFFSET } from "./script-module.ts";
import { answerError, runnerRunScript, type HeldRunner, type RunnerBinding } from "./runner-client.ts";
import { UNTRUSTED_LIMITS } from "./untrusted-limits.ts";
import { LIMITS, limitDetails } from "../limits.ts";

/** How a run ended. `result` is absent when the script returned undefined. */
export type ScriptOutcome =
  | { status: "succeeded"; result?: unknown }
  | { status: "failed"; error: { code: FailureCode; message: string } };

/**
 * A run fails with SCRIPT_FAILED, TIMEOUT, LOOP_LIMIT when a runaway chain of reactions stopped
 * it, RESOURCE_EXHAUSTED when it was stopped for holding the CPU or memory (its runner died under
 * it), or UNAVAILABLE when no runner could take it.
 */
type FailureCode = "SCRIPT_FAILED" | "TIMEOUT" | "LOOP_LIMIT" | "RESOURCE_EXHAUSTED" | "UNAVAILABLE";

/** Failures the platform decides (not the script), kept with their own code. */
const PLATFORM_FAILURES: ReadonlySet<string> = new Set(["TIMEOUT", "RESOURCE_EXHAUSTED", "UNAVAILABLE"]);

const COMPATIBILITY_DATE = "2026-08-01";

const preparedScripts = new PreparedScripts();

/**
 * Starts preparing `source` (parsing, guarding, hashing) ahead of `runScript`, which then finds
 * it done or under way: a caller that must wait on I/O first (a durable request) overlaps the two.
 */
export function prepareScriptAhead(source: string): void {
  void preparedScripts.prepare(source).catch(() => undefined);
}

/** Validates script source: a non-empty string within SOURCE_MAX_LENGTH. */
export function parseScriptSource(source: unknown): string {
  if (typeof source !== "string" || source.trim().length === 0) {
    throw new ItxError("INVALID_ARGUMENT", "a script is a string of source: async (itx) => { ... }");
  }
  if (source.length > LIMITS.SOURCE_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `a script is at most ${LIMITS.SOURCE_MAX_LENGTH} characters`, {
      details: limitDetails("SOURCE_MAX_LENGTH"),
    });
  }
  return source;
}

/**
 * Runs `async (itx) => { ... }` in a Worker Loader isolate, handing it `itx` (the caller builds it
 * from `props`: see `isolateItx`). Its only ways out are the itx it is
 * called with (scoped to the origin context) and its global fetch, which is the origin's egress. The
 * isolate is cached by source and scope: the same script in another scope gets its own isolate,
 * so no isolate ever holds two scopes' authority.
 *
 * Secret material the egress pipe substituted for this scope during the run never leaves in the
 * outcome: every spelling of it the scrub knows is replaced with "[secret]" in the result's strings
 * and keys and in a failure's message (see materials-in-use.ts). The outcome is what run-settled
 * stores and `itx.run` answers, so both are clean.
 *
 * With `gate`, the script starts only once `gate` resolves, and never when it rejects (the outcome
 * is then a failure the caller discards: nothing ran); the deadline counts from the gate. In this
 * Worker's Loader the isolate loads meanwhile (nothing of the script runs in a load: see
 * script-module.ts), so a caller that must first make its request durable overlaps the two; the
 * runner is called once the gate opens (see inRunner). With `held`, a caller that lives long (a
 * Cap'n Web connection, a Durable Object) sends its runs on its own open session into the runner.
 */
export async function runScript(env: Env, props: IsolateProps, itx: unknown, source: string, options: RunOptions = {}): Promise<ScriptOutcome> {
  const { timeoutMs = LIMITS.TIMEOUT_MS, direct = directEgressVerdict(env, props), gate, held } = options;
  const script = await preparedScripts.prepare(source);
  if (!script.ok) return clipFailure(failed("SCRIPT_FAILED", script.message));
  const watch = watchMaterials(props);
  try {
    // Cut after the scrub, which must see every spelling of a secret whole.
    return clipFailure(scrubOutcome(await runPrepared(env, props, itx, script, timeoutMs, direct, gate, held), watch));
  } finally {
    watch.end();
  }
}

/** How `runScript` runs a script, beyond what it runs and as whom. */
export interface RunOptions {
  /** The script's deadline (LIMITS.TIMEOUT_MS by default). */
  timeoutMs?: number;
  /** The run's direct-egress verdict, when the caller has it under way. */
  direct?: Promise<DirectEgressVerdict | undefined>;
  /** The script starts only once this resolves, and never when it rejects. */
  gate?: Promise<unknown>;
  /** The caller's open session into the runner (see HeldRunner). */
  held?: HeldRunner;
}

// A failure's message within FAILURE_MESSAGE_MAX_LENGTH, so the outcome fits the event that settles its run.
function clipFailure(outcome: ScriptOutcome): ScriptOutcome {
  if (outcome.status !== "failed") return outcome;
  const { message } = outcome.error;
  const max = LIMITS.FAILURE_MESSAGE_MAX_LENGTH;
  if (message.length <= max) return outcome;
  return failed(outcome.error.code, `${message.slice(0, max)}... (${message.length - max} more characters cut: FAILURE_MESSAGE_MAX_LENGTH)`);
}

function scrubOutcome(outcome: ScriptOutcome, watch: MaterialWatch): ScriptOutcome {
  const materials = watch.materials();
  if (materials.length === 0) return outcome;
  try {
    watch.assertWithinLimit();
  } catch (error) {
    return failed("SCRIPT_FAILED", errorMessage(error));
  }
  // A scope that used a secret lately has every run scrubbed of it: its patterns are kept.
  const patterns = keptScrubPatterns(materials);
  if (outcome.status === "failed") return failed(outcome.error.code, scrubText(outcome.error.message, patterns));
  if (!("result" in outcome)) return outcome;
  return { status: "succeeded", result: scrubJsonValue(outcome.result, patterns).value };
}

async function runPrepared(
  env: Env,
  props: IsolateProps,
  itx: unknown,
  script: { hash: string; module: string },
  timeoutMs: number,
  direct: Promise<DirectEgressVerdict | undefined>,
  gate: Promise<unknown> | undefined,
  held: HeldRunner | undefined,
): Promise<ScriptOutcome> {
  try {
    const answer = (
      env.RUNNER
        ? await inRunner(env.RUNNER, `script:${script.hash}:${props.depth}:${isolateAuthorityKey(props)}`, script.module, props, itx, timeoutMs, direct, gate, held)
        : await inProcess(env, `script:${script.hash}:${props.depth}:${isolateScopeKey(props)}`, script.module, props, itx, timeoutMs, gate)
    ) as {
      undefined?: true;
      json?: string;
      thrown?: { message?: unknown; code?: unknown };
    };
    if (answer.thrown !== undefined) {
      const { message, code } = answer.thrown;
      return scriptFailure(typeof message === "string" ? message : "the script failed", typeof code === "string" ? code : undefined);
    }
    if (answer.undefined) return { status: "succeeded" };
    const json = answer.json ?? "null";
    if (json.length > LIMITS.RESULT_MAX_BYTES) {
      return failed("SCRIPT_FAILED", `the script returned ${json.length} bytes of JSON; at most ${LIMITS.RESULT_MAX_BYTES} are kept (RESULT_MAX_BYTES)`);
    }
    return { status: "succeeded", result: JSON.parse(json) };
  } catch (error) {
    if (error instanceof ItxError && PLATFORM_FAILURES.has(error.code)) return failed(error.code as FailureCode, errorMessage(error));
    return scriptFailure(errorMessage(error), errorCode(error));
  }
}

// What the script threw (answered by its module, or thrown by the runtime on its behalf). Its
// code is its own, never the platform's, except that a chain of reactions stopped inside the
// script keeps LOOP_LIMIT, so what reacts to the run's outcome (an agent's loop) can tell a
// runaway from an ordinary failure.
function scriptFailure(message: string, code: string | undefined): ScriptOutcome {
  const loopLimited = code === "LOOP_LIMIT" || message.includes("[LOOP_LIMIT]");
  return failed(loopLimited ? "LOOP_LIMIT" : "SCRIPT_FAILED", describeFailure(message));
}

// Locally: in the runner process, which the watchdog kills when the script holds it.
// Its bare fetch() may leave from the runner when `verdict` holds (runner/direct-egress.ts). The
// isolate's id names its authority; its reaction chain travels as the load's variant (see isolateAuthorityKey).
async function inRunner(
  runner: RunnerBinding,
  id: string,
  module: string,
  props: IsolateProps,
  itx: unknown,
  timeoutMs: number,
  verdict: Promise<DirectEgressVerdict | undefined>,
  gate: Promise<unknown> | undefined,
  held: HeldRunner | undefined,
): Promise<unknown> {
  const variant = reactionKey(props);
  const load = { id, ...(variant === null ? {} : { variant }), compatibilityDate: COMPATIBILITY_DATE, mainModule: "script.js", modules: { "script.js": module }, limits: { cpuMs: UNTRUSTED_LIMITS.CPU_MS }, itxBinding: false };
  // The call waits for the gate. Sent earlier (with a gate the runner asks, or beside a preload of
  // the isolate), it cost the OS's thread more than the overlap saved here: each message to the
  // runner crosses the dev registry's proxy on that thread, ahead of the request's append. A
  // preload on a held session (one message, about 0.3 ms) measured no better either.
  if (gate !== undefined) await gate;
  const answer = await runnerRunScript(runner, load, props, itx, timeoutMs, { verdict: await verdict, valid: stillValid }, held);
  if (!answer.ok) throw answerError(answer.error);
  return answer.value;
}

// A deployment (and the workerd tests): in this Worker's own Loader, where Cloudflare enforces
// `limits`. The deadline here only stops waiting; the CPU limit is what stops the isolate. The
// isolate's egress props are fixed when it loads, reaction chain included, so its id names them all.
async function inProcess(env: Env, id: string, module: string, props: IsolateProps, itx: unknown, timeoutMs: number, gate: Promise<unknown> | undefined): Promise<unknown> {
  const worker = env.LOADER.get(id, () => ({
    compatibilityDate: COMPATIBILITY_DATE,
    mainModule: "script.js",
    modules: { "script.js": module },
    // No bindings: the script's itx arrives with each call (below), saving the isolate a call
    // back into the Worker to fetch it; its fetch still goes out through the origin's egress.
    env: {},
    globalOutbound: exports.EgressEntrypoint({ props }),
    limits: { cpuMs: UNTRUSTED_LIMITS.CPU_MS },
  }));
  // oxlint-disable-next-line typescript/no-explicit-any -- the loaded module's entrypoint is ours, typed by scriptModule
  const entry = worker.getEntrypoint() as any;
  if (gate !== undefined) {
    // The isolate loads while the gate is pending; a load that fails fails again in `run`.
    const loaded = Promise.resolve(entry.ready()).catch(() => undefined);
    await gate;
    await loaded;
  }
  return raceDeadline(Promise.resolve(entry.run(itx)), timeoutMs, (): never => {
    throw new ItxError("TIMEOUT", `the script ran past its ${timeoutMs} ms deadline`);
  });
}

function failed(code: FailureCode, message: string): ScriptOutcome {
  return { status: "failed", error: { code, message } };
}

// The script's own message, with positions in the generated module turned into script lines.
function describeFailure(message: string): string {
  return message.replace(/script\.js:(\d+)(?::(\d+))?/g, (_match, line: string, column?: string) => {
    const scriptLine = Number(line) - SCRIPT_LINE_OFFSET;
    return `line ${scriptLine}${column ? `, column ${column}` : ""} of the script`;
  });
}
