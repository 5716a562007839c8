import { ItxError, errorCode } from "iterate/errors";
import type { Caller } from "../capability-host/capability-host-api.ts";
import { stampOf } from "../capability-host/capability-host-api.ts";
import { ITX_CREATED } from "../capability-host/itx-contract.ts";
import { hostStub } from "../capability-host/host-stub.ts";
import { SUBSCRIPTION_CONFIGURED } from "../stream/stream-core.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";

/** The binding whose Durable Objects host contexts (and, as processor hosts, fold their streams). */
export const CAPABILITY_HOST_BINDING = "CAPABILITY_HOST";

/**
 * Creates a context by appending, in one commit, the subscription that feeds its stream to its
 * capability host and its birth certificate. Both carry idempotency keys and the fold keeps the
 * first certificate, so creating an existing context is a no-op: get-or-create. Answers
 * "born-here" when the context's certificate is the one asked for (new, or an identical repeat),
 * "born-elsewhere" when an earlier, different one stands.
 *
 * With `fresh`, a context is born only on a stream that holds nothing yet: a path already in use
 * without a certificate (a context the root reaches with `cd`, which inherits from `/`) answers
 * "in-use" and is left as it is, so no one but the root adopts what the root already uses.
 */
export async function ensureContext(
  env: Env,
  input: { projectId: string; path: string; name: string; parent: string | null; ancestors: string[]; caller: Caller; fresh?: boolean },
): Promise<"born-here" | "born-elsewhere" | "in-use"> {
  const stream = streamStub(env.STREAM, `${input.projectId}:${input.path}`);
  try {
    await stream.append({
      ...(input.fresh === true ? { expectedOffset: 0 } : {}),
      events: [
        {
          type: SUBSCRIPTION_CONFIGURED,
          payload: {
            key: "core",
            subscription: { type: "processor", binding: CAPABILITY_HOST_BINDING, host: `${input.projectId}:${input.path}`, processor: "core" },
          },
          idempotencyKey: "itx/subscription-configured:core",
        },
        {
          type: ITX_CREATED,
          payload: { name: input.name, parent: input.parent, ancestors: input.ancestors },
          idempotencyKey: "itx/created",
        },
      ],
      stamp: { ...stampOf(input.caller), platform: "context" },
    });
    return "born-here";
  } catch (error) {
    const code = errorCode(error);
    // Already born (with another name or parent): the first certificate stands.
    if (code === "IDEMPOTENCY_CONFLICT") return "born-elsewhere";
    if (code !== "OFFSET_CONFLICT") throw error;
    // Not fresh: born before (by this parent, or another), or in use without a certificate.
    const born = await hostStub(env, input.projectId, input.path).birth();
    if (born.name === null) return "in-use";
    return born.parent === input.parent ? "born-here" : "born-elsewhere";
  }
}

/**
 * `ensureContext` for a context the platform makes in the root's name (an agent, a repository):
 * its parent must be `/`. The first birth certificate stands, and one that names another parent
 * (code acting as /agents/a that extended onto the path first) would let that parent act as the
 * context and catch its calls on its own mounts, so the platform refuses to build on it.
 */
export async function ensureRootChild(env: Env, input: { projectId: string; path: string; name: string; caller: Caller }, what: string): Promise<void> {
  const born = await ensureContext(env, { ...input, parent: "/", ancestors: ["/"] });
  if (born === "born-here") return;
  const { parent } = await hostStub(env, input.projectId, input.path).birth();
  if (parent === "/") return;
  throw new ItxError("PERMISSION_DENIED", `${input.path} is a context born under ${String(parent)}, not the project's root: no ${what} is made on it`, {
    details: { reason: "not-root-born" },
  });
}

/**
 * Whether code acting as `origin` acts as the context at `path` or one of its ancestors (read
 * from the context's birth certificate): authority flows down the tree, never to a sibling.
 */
export async function actsAsSelfOrAncestor(env: Env, where: { projectId: string; path: string }, origin: string): Promise<boolean> {
  if (origin === where.path || origin === "/") return true;
  const { ancestors } = await hostStub(env, where.projectId, where.path).birth();
  return ancestors.includes(origin);
}
