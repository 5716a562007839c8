import { errorCode } from "iterate/errors";
import { relay } from "../api/relay.ts";
import { bufferedRequest, sendThroughPipe, toRequest } from "../egress/egress-pipe.ts";
import { knownShadowFree, noteShadowFree, revocationFloor } from "../egress/direct-egress-verdict.ts";
import { resolveProjectId, type HandleContext } from "./handle-scope.ts";

/**
 * `itx.fetch`: outbound HTTP. A `fetch` mounted anywhere on the chain takes the call (a shadow can
 * reach the default through `itx.super.fetch`); otherwise the platform's default pipe sends it.
 * Code in a jail reaches the pipe only with a `fetch` grant; its own fetch mount is a grant itself.
 */
export async function fetchThroughChain(ctx: HandleContext, input: unknown, init?: unknown): Promise<Response> {
  // Sending a request over RPC uses its body up, and on a miss the pipe needs it again: the body
  // is read once here (at most LIMITS.EGRESS_BODY_MAX_BYTES) and each road gets its own request.
  const copy = await bufferedRequest(toRequest(input, init));
  const request = copy();
  if (!(await shadowed(ctx))) return sendThroughDefaultPipe(ctx, request);
  try {
    return (await ctx.handle.invokeCapability({ path: ["fetch"], args: [copy()] })) as Response;
  } catch (error) {
    if (errorCode(error) === "NOT_FOUND" && (error as { details?: { unresolved?: string } }).details?.unresolved === "fetch") {
      return sendThroughDefaultPipe(ctx, request);
    }
    throw error;
  }
}

// Most contexts shadow nothing: ask first (a boolean), rather than a call that throws NOT_FOUND.
// Locally a shadow-free answer is kept until a provide raises the revocation floor (decision 0017),
// so a context that fetches often (an agent asking its model) asks once; code in a jail always asks.
async function shadowed(ctx: HandleContext): Promise<boolean> {
  const ask = async () => relay((await ctx.host()).provides(["fetch"]));
  const { env, confinement } = ctx.scope;
  if (confinement || env.RUNNER === undefined) return ask();
  const { projectId, path } = await ctx.where();
  const key = JSON.stringify([projectId, path]);
  if (knownShadowFree(env, key)) return false;
  const askedAt = revocationFloor();
  const answer = await ask();
  noteShadowFree(env, key, askedAt, answer);
  return answer;
}

async function sendThroughDefaultPipe(ctx: HandleContext, request: Request): Promise<Response> {
  ctx.guard("fetch"); // a jail's own fetch mount is its grant; the pipe needs a built-in grant
  const { scope } = ctx;
  const projectId = await resolveProjectId(scope);
  const egressScope = { projectId, origin: scope.origin, principal: scope.principal, ...(scope.confinement ? { jailed: true } : {}) };
  return sendThroughPipe(scope.env, egressScope, request);
}
