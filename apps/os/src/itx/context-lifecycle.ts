import { ItxError, errorCode } from "iterate/errors";
import type { Caller } from "../capability-host/capability-host-api.ts";
import { stampOf } from "../capability-host/capability-host-api.ts";
import { ITX_CREATED } from "../capability-host/itx-contract.ts";
import { hostStub } from "../capability-host/host-stub.ts";
import { SUBSCRIPTION_CONFIGURED } from "../stream/stream-core.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";

/** The binding whose Durable Objects host contexts (and, as processor hosts, fold their streams). */
export const CAPABILITY_HOST_BINDING = "CAPABILITY_HOST";

/** How `ensureContext` found the context: its certificate names this parent, another, or none stands on a used stream. */
export type Birth = { born: "here" | "elsewhere"; parent: string | null } | { born: "in-use" };

/**
 * Creates a context by appending, in one commit, the subscription that feeds its stream to its
 * capability host and its birth certificate. Both carry idempotency keys and the fold keeps the
 * first certificate, so creating an existing context is a no-op: get-or-create. Answers "here"
 * when the certificate that stands names the parent asked for (new, or a repeat), "elsewhere"
 * with the parent it names otherwise. The certificate is read from the stream itself, never from
 * the context's host, whose fold may not have caught up with it yet.
 *
 * With `fresh`, a context is born only on a stream that holds nothing yet: a path already in use
 * without a certificate (a context the root reaches with `cd`, which inherits from `/`) answers
 * "in-use" and is left as it is, so no one but the root adopts what the root already uses.
 */
export async function ensureContext(
  env: Env,
  input: { projectId: string; path: string; name: string; parent: string | null; ancestors: string[]; caller: Caller; fresh?: boolean },
): Promise<Birth> {
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
    return { born: "here", parent: input.parent };
  } catch (error) {
    // Born before (the first certificate stands), or, not fresh, in use without one.
    const code = errorCode(error);
    if (code !== "IDEMPOTENCY_CONFLICT" && code !== "OFFSET_CONFLICT") throw error;
    const certificate = await stream.getByIdempotencyKey("itx/created");
    if (certificate === null) return { born: "in-use" };
    const parent = (certificate.payload as { parent?: unknown }).parent;
    const named = typeof parent === "string" ? parent : null;
    return { born: named === input.parent ? "here" : "elsewhere", parent: named };
  }
}

/**
 * `ensureContext` for a context the platform makes in the root's name (an agent, a repository):
 * its parent must be `/`. The first birth certificate stands, and one that names another parent
 * (code acting as /agents/a that extended onto the path first) would let that parent act as the
 * context and catch its calls on its own mounts, so the platform refuses to build on it.
 */
export async function ensureRootChild(env: Env, input: { projectId: string; path: string; name: string; caller: Caller }, what: string): Promise<void> {
  const birth = await ensureContext(env, { ...input, parent: "/", ancestors: ["/"] });
  if (birth.born === "here") return;
  const parent = birth.born === "elsewhere" ? birth.parent : "no certificate";
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
