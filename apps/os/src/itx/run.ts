import type { EventSource } from "iterate/types";
import { ItxError, errorMessage } from "iterate/errors";
import { relay } from "../api/relay.ts";
import { RUN_REQUESTED, RUN_SETTLED } from "../capability-host/itx-contract.ts";
import { directEgressVerdict } from "../egress/direct-egress-verdict.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import type { IsolateProps } from "../worker-loader/isolate-props.ts";
import { parseScriptSource, prepareScriptAhead, runScript, type ScriptOutcome } from "../worker-loader/run-script.ts";
import { isolateScope, lookupConfinement, stampOfScope, type HandleContext } from "./handle-scope.ts";
import type { ItxRpcTarget } from "./itx-rpc-target.ts";
import { LIMITS, limitDetails } from "../limits.ts";

/**
 * `itx.run(script)`: runs `async (itx) => { ... }` in an isolate whose itx is the handle: it sees
 * this context's chain and acts with the handle's origin. Recorded as itx/run-requested then
 * itx/run-settled on this context's stream. A throw is SCRIPT_FAILED with the script's own
 * message; past its deadline, TIMEOUT. `isolateItx` mints the itx the script is handed.
 *
 * @example
 * await itx.run("async (itx) => (await itx.whoami()).path"); // "/"
 */
export async function run(
  ctx: HandleContext,
  isolateItx: (props: IsolateProps) => ItxRpcTarget,
  script: unknown,
  options: { timeoutMs?: unknown } = {},
): Promise<unknown> {
  const source = parseScriptSource(script);
  const timeoutMs = parseTimeout(options?.timeoutMs);
  const { scope } = ctx;
  const { projectId, path } = await ctx.where();
  const stream = streamStub(scope.env.STREAM, `${projectId}:${path}`);
  const stamp: EventSource = { ...stampOfScope(scope), platform: "run" };
  // The script starts only once its request is durable, and not at all if the append is refused
  // (LOOP_LIMIT). The settled fact follows within the run, so the context's processors are sent
  // both in one delivery. What the run needs that does not depend on the request goes out beside
  // its append, whose round trip it would otherwise follow: the origin's confinement, then the
  // direct-egress verdict (does anything shadow its fetch?), the script's preparation, and the
  // load of its isolate, which runScript holds at the request (its gate) before the script starts.
  prepareScriptAhead(source);
  const requesting = relay(stream.append({ events: [{ type: RUN_REQUESTED, payload: { script: source } }], stamp, answer: "receipt", holdDelivery: true }));
  const running = lookupConfinement(scope.env, projectId, scope.origin).then((confinement) => {
    const props: IsolateProps = { ...isolateScope(scope), path, projectId, depth: (scope.depth ?? 0) + 1, ...(confinement ? { confinement } : {}) };
    return runScript(scope.env, props, isolateItx(props), source, {
      timeoutMs,
      direct: directEgressVerdict(scope.env, props),
      gate: requesting,
      ...(scope.connection ? { held: scope.connection.runner } : {}),
    });
  });
  const [requested, ran] = await Promise.allSettled([requesting, running]);
  // Refused: the gate kept the script from starting (what runScript answered is not an outcome).
  if (requested.status === "rejected") throw requested.reason;
  const requestOffset = requested.value.offsets[0] ?? 0;
  // A request that is durable is always settled, also when the run could not be set up.
  const outcome: ScriptOutcome =
    ran.status === "fulfilled" ? ran.value : { status: "failed", error: { code: "UNAVAILABLE", message: `the run could not be set up: ${errorMessage(ran.reason)}` } };
  const settled = { type: RUN_SETTLED, payload: { requestOffset, ...outcome }, idempotencyKey: `itx/run-settled:${requestOffset}` };
  await relay(stream.append({ events: [settled], stamp, answer: "receipt" }));
  if (outcome.status === "failed") throw new ItxError(outcome.error.code, outcome.error.message, { details: { requestOffset } });
  return outcome.result;
}

function parseTimeout(value: unknown): number {
  if (value === undefined) return LIMITS.TIMEOUT_MS;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > LIMITS.TIMEOUT_MS) {
    throw new ItxError("INVALID_ARGUMENT", `timeoutMs is an integer from 1 to ${LIMITS.TIMEOUT_MS}`, { details: limitDetails("TIMEOUT_MS") });
  }
  return value;
}
