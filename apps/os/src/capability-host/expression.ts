import { ItxError } from "iterate/errors";
import { ItxRpcTarget } from "../itx/itx-rpc-target.ts";
import type { Caller } from "./capability-host-api.ts";
import { RESERVED_PATH_SEGMENTS, parseCallPath, pathKey } from "./capability-path.ts";
import { expressionStepSchema, type ExpressionStep } from "./itx-contract.ts";
import { LIMITS, limitDetails } from "../limits.ts";

/**
 * Reads a provided capability as a durable expression recipe, `{ type: "itx-expression", steps }`,
 * or answers undefined when it is a live value. A plain object naming any other `type` is an
 * unknown kind. A recipe whose first step reaches its own mount would call itself and is refused.
 *
 * @example
 * // itx.log.append(event) appends to /log; itx.note(event) does the same in one name
 * { type: "itx-expression", steps: [{ path: ["streams", "get"], args: ["/log"] }] }
 * { type: "itx-expression", steps: [{ path: ["streams", "get"], args: ["/log"] }, { path: ["append"] }] }
 */
export function parseExpression(capability: unknown, mountPath: readonly string[]): ExpressionStep[] | undefined {
  if (typeof capability === "function") return undefined;
  if (typeof capability !== "object" || capability === null) {
    throw new ItxError("INVALID_ARGUMENT", `a capability is a function, an object, or an expression recipe, got ${capability === null ? "null" : typeof capability}`);
  }
  const kind = (capability as { type?: unknown }).type;
  const plain = Object.getPrototypeOf(capability) === Object.prototype;
  if (!plain || kind === undefined) {
    if (plain && !hasMethod(capability)) {
      throw new ItxError("INVALID_ARGUMENT", "a live capability object needs at least one method");
    }
    return undefined;
  }
  if (kind === "rpc") return undefined; // a source address: see source-capability.ts
  if (kind !== "itx-expression") {
    throw new ItxError(
      "INVALID_ARGUMENT",
      `unknown capability kind ${JSON.stringify(String(kind).slice(0, 64))}; durable capabilities are { type: "itx-expression", steps } or { type: "rpc", worker: { type: "source", source } }`,
    );
  }
  const { steps, type: _type, ...rest } = capability as { steps?: unknown; type: string };
  if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `an expression recipe has no field(s) ${Object.keys(rest).join(", ")}`);
  if (!Array.isArray(steps) || steps.length === 0 || steps.length > LIMITS.EXPRESSION_STEPS_MAX) {
    throw new ItxError("INVALID_ARGUMENT", `an expression recipe has 1-${LIMITS.EXPRESSION_STEPS_MAX} steps`, { details: limitDetails("EXPRESSION_STEPS_MAX") });
  }
  const parsed = steps.map((step, index) => {
    const result = expressionStepSchema.safeParse(step);
    if (!result.success) throw new ItxError("INVALID_ARGUMENT", `expression step ${index} must be { path: string[], args?: unknown[] }`);
    parseCallPath(result.data.path);
    return result.data;
  });
  const first = (parsed[0] as ExpressionStep).path;
  const shorter = Math.min(first.length, mountPath.length);
  if (pathKey(first.slice(0, shorter)) === pathKey(mountPath.slice(0, shorter))) {
    throw new ItxError("INVALID_ARGUMENT", `the recipe for ${mountPath.join(".")} would call itself (${first.join(".")})`);
  }
  return parsed;
}

/**
 * Replays a recipe against the itx of the context that holds the mount, acting as whoever provided
 * it (like a live capability, which runs in its provider's process with the provider's authority),
 * then applies the call: the remainder of the path and the call's arguments. A mount recorded
 * without its provider acts as the caller. The caller's reaction chain goes on through the replay.
 */
export async function replayExpression(input: {
  env: Env;
  projectId: string;
  path: string;
  steps: ExpressionStep[];
  remainder: string[];
  args: unknown[];
  caller: Caller;
  provider: { principal?: string; origin?: string };
  depth: number;
}): Promise<unknown> {
  const acting = input.provider.origin === undefined ? input.caller : { principal: input.provider.principal ?? input.caller.principal, origin: input.provider.origin };
  let value: unknown = new ItxRpcTarget({
    env: input.env,
    principal: acting.principal,
    projectId: input.projectId,
    path: input.path,
    origin: acting.origin,
    depth: input.depth,
    ...(input.caller.reaction ? { reaction: input.caller.reaction } : {}),
  });
  for (const [index, step] of input.steps.entries()) {
    const last = index === input.steps.length - 1;
    const args = step.args ?? (last && input.remainder.length === 0 ? input.args : []);
    value = await callPath(value, step.path, args);
  }
  if (input.remainder.length > 0) return callPath(value, input.remainder, input.args);
  return value;
}

async function callPath(target: unknown, path: string[], args: unknown[]): Promise<unknown> {
  let parent: unknown = target;
  for (const segment of path.slice(0, -1)) parent = member(parent, segment);
  const last = path.at(-1) as string;
  const method = member(parent, last);
  if (typeof method !== "function") throw new ItxError("NOT_FOUND", `${path.join(".")} is not callable here`);
  return Reflect.apply(method, parent, args);
}

function member(value: unknown, segment: string): unknown {
  if (RESERVED_PATH_SEGMENTS.has(segment)) throw new ItxError("INVALID_ARGUMENT", `"${segment}" is reserved`);
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return undefined;
  return (value as Record<string, unknown>)[segment];
}

function hasMethod(value: unknown, depth = 0): boolean {
  if (typeof value === "function" || isStubLike(value)) return true;
  if (typeof value !== "object" || value === null || depth > 16) return false;
  return Object.values(value).some((inner) => hasMethod(inner, depth + 1));
}

function isStubLike(value: unknown): boolean {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { dup?: unknown }).dup === "function";
}
