import { ItxError } from "iterate/errors";
import { relay } from "../api/relay.ts";
import type { Caller } from "../capability-host/capability-host-api.ts";
import { parseCallPath } from "../capability-host/capability-path.ts";
import { hostStub } from "../capability-host/host-stub.ts";
import { parseRow, type BuiltInNames } from "../capability-host/jail.ts";
import { parseStreamPath } from "../stream/coordinate.ts";
import { ensureContext } from "./context-lifecycle.ts";
import type { HandleContext } from "./handle-scope.ts";
import type { ItxRpcTarget } from "./itx-rpc-target.ts";
import { CapabilityProvisionRpcTarget } from "./provision.ts";

// The members every handle has for its own context: identity, the capability table, and the
// context tree. Each takes the handle's context first (see built-ins.ts, which makes them members).

export type ProvideCapabilityInput = {
  name?: unknown;
  path?: unknown;
  instructions?: unknown;
  types?: unknown;
  capability?: unknown;
  http?: unknown;
};

export async function whoami(ctx: HandleContext): Promise<{ projectId: string; path: string; origin: string; principal: string }> {
  const { projectId, path } = await ctx.where();
  return { projectId, path, origin: ctx.scope.origin, principal: ctx.scope.principal };
}

/** Mounts a capability on this context. Live values are called back over the caller's connection. */
export async function provideCapability(ctx: HandleContext, builtIns: BuiltInNames, input: ProvideCapabilityInput): Promise<CapabilityProvisionRpcTarget> {
  if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "provideCapability takes { name | path, capability, instructions?, types?, http? }");
  const { name, path, instructions, types, capability, http, ...rest } = input;
  if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `provideCapability has no field(s) ${Object.keys(rest).join(", ")}`);
  if (capability === undefined) throw new ItxError("INVALID_ARGUMENT", "provideCapability needs a capability");
  const mountPath = parseRow({ name, path }, capability, builtIns).path;
  const caller = ctx.caller();
  const where = await ctx.where();
  const { env, connection } = ctx.scope;
  const host = hostStub(env, where.projectId, where.path);
  const live = typeof capability === "function" || (typeof capability === "object" && capability !== null && !("type" in capability));
  if (live) connection?.assertMayTrack(where.projectId, where.path);
  const provided = await relay(
    host.provide({
      path: mountPath,
      capability,
      caller,
      ...(instructions === undefined ? {} : { instructions: instructions as string }),
      ...(types === undefined ? {} : { types: types as string }),
      ...(http === undefined ? {} : { http }),
    }),
  );
  if (provided.kind === "live") connection?.trackLiveProvide(env, where.projectId, where.path);
  return new CapabilityProvisionRpcTarget({
    path: provided.path,
    providedAtOffset: provided.providedAtOffset,
    live: provided.kind === "live",
    revoke: () => relay(host.revoke({ path: provided.path, providedAtOffset: provided.providedAtOffset, caller })),
    sessionEnded: () => connection?.closed ?? false,
  });
}

export async function revokeCapability(ctx: HandleContext, input: { path: unknown; providedAtOffset?: number }): Promise<boolean> {
  if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "revokeCapability takes { path, providedAtOffset? }");
  const request: { path: unknown; providedAtOffset?: number; caller: Caller } = { path: input.path, caller: ctx.caller() };
  if (input.providedAtOffset !== undefined) request.providedAtOffset = input.providedAtOffset;
  return relay((await ctx.host()).revoke(request));
}

/** Explicit dynamic dispatch; `itx.a.b(x)` is the same as `invokeCapability({ path: ["a", "b"], args: [x] })`. */
export async function invokeCapability(ctx: HandleContext, input: { path: unknown; args?: unknown }): Promise<unknown> {
  if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "invokeCapability takes { path, args }");
  const path = parseCallPath(input.path);
  const args = input.args ?? [];
  return relay((await ctx.host()).invoke({ path, args, caller: ctx.caller(), depth: ctx.scope.depth ?? 0 }));
}

/**
 * A child context (get-or-create): `{ path }` you choose, `{ name }` for `/itx/<name>`, or a
 * generated `/itx/<id>`. Its mounts shadow this context's path by path; misses fall through.
 */
export async function extend(ctx: HandleContext, input: { name?: unknown; path?: unknown } = {}): Promise<ItxRpcTarget> {
  if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "extend takes { name? } or { path? }");
  const { name, path, ...rest } = input;
  if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `extend has no field(s) ${Object.keys(rest).join(", ")}`);
  if (name !== undefined && path !== undefined) throw new ItxError("INVALID_ARGUMENT", "extend takes a name or a path, not both");
  if (name !== undefined && (typeof name !== "string" || !/^[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,127}$/.test(name))) {
    throw new ItxError("INVALID_ARGUMENT", "an extend name is 1-128 characters of letters, digits and . _ ~ -");
  }
  const childPath = path !== undefined ? parseStreamPath(path) : `/itx/${(name as string | undefined) ?? crypto.randomUUID()}`;
  const where = await ctx.where();
  const { env, origin } = ctx.scope;
  if (childPath === where.path || childPath === "/") throw new ItxError("INVALID_ARGUMENT", `${childPath} cannot be a child of ${where.path}`);
  const parent = await relay(hostStub(env, where.projectId, where.path).birth());
  if (parent.ancestors.includes(childPath)) throw new ItxError("INVALID_ARGUMENT", `${childPath} is an ancestor of ${where.path}`);
  // The root may make a child of any context, at any path. Other code makes children only of the
  // contexts it acts as (or is above), only below them or in /itx/, and only on a path nobody uses
  // yet: a child's parent acts as the child and catches its calls, so code that could adopt a path
  // the root already uses (`cd("/work")`), or one it will make later, could act as it.
  const rootActing = origin === "/";
  if (!rootActing) mayMakeChild(origin, where.path, parent.ancestors, childPath);
  const birth = await ensureContext(env, {
    projectId: where.projectId,
    path: childPath,
    name: (name as string | undefined) ?? childPath.split("/").at(-1) ?? childPath,
    parent: where.path,
    ancestors: [...parent.ancestors, where.path],
    caller: ctx.caller(),
    fresh: !rootActing,
  });
  if (birth.born === "in-use") {
    throw new ItxError("PERMISSION_DENIED", `${childPath} is in use without a birth certificate (it inherits from /): only the root makes it a child`, {
      details: { reason: "in-use" },
    });
  }
  // A handle acting as another context (`cd`) keeps acting as it: it never lends a name.
  if (origin !== where.path) return ctx.at(childPath, origin);
  // Narrowing is construction: code acting as this context acts as a child it made (or that was
  // born under it). A context born under another parent is not its child: answering a handle on it
  // that still acts as this context would hand back a wider handle where a narrower was asked for
  // (code that then runs untrusted work in "its child" would run it as itself).
  if (birth.born === "elsewhere") {
    throw new ItxError("PERMISSION_DENIED", `${childPath} is a context born under ${String(birth.parent)}, not a child of ${where.path}: use cd(${JSON.stringify(childPath)}) to reach it`, {
      details: { reason: "born-elsewhere" },
    });
  }
  return ctx.at(childPath, childPath);
}

/** Refuses a child that code acting as `origin` (not the root) may not make under `parentPath`. */
function mayMakeChild(origin: string, parentPath: string, parentAncestors: string[], childPath: string): void {
  if (origin !== parentPath && !parentAncestors.includes(origin)) {
    throw new ItxError("PERMISSION_DENIED", `code acting as ${origin} makes no children of ${parentPath}, which it does not act as`, {
      details: { reason: "not-yours" },
    });
  }
  if (!childPath.startsWith(`${parentPath}/`) && !childPath.startsWith("/itx/")) {
    throw new ItxError("PERMISSION_DENIED", `code acting as ${origin} makes children below ${parentPath}/ or in /itx/, not at ${childPath}`, {
      details: { reason: "outside" },
    });
  }
}

/** The parent context: the same chain with this context's shadows skipped. Calls keep this origin. */
export function parentContext(ctx: HandleContext): ItxRpcTarget {
  const parent = (async () => {
    const { parent: found } = await relay((await ctx.host()).birth());
    if (found === null) throw new ItxError("NOT_FOUND", "the root context has no parent");
    return found;
  })();
  parent.catch(() => undefined); // a handle nobody calls must not leave an unhandled rejection
  return ctx.at(parent, ctx.scope.origin);
}

/**
 * Another context of the same project. The handle still acts as this one: its writes and calls
 * carry this handle's origin, whichever context they reach.
 */
export function cd(ctx: HandleContext, path: unknown): ItxRpcTarget {
  return ctx.at(parseStreamPath(path), ctx.scope.origin);
}
