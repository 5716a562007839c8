import type { EventSource, Reaction } from "iterate/types";
import { relay } from "../api/relay.ts";
import type { Connection } from "../api/connection.ts";
import type { Caller } from "../capability-host/capability-host-api.ts";
import { hostStub, type CapabilityHostStub } from "../capability-host/host-stub.ts";
import type { Confinement } from "../capability-host/jail.ts";
import type { StreamRpcTarget } from "../stream/stream-rpc-target.ts";
import type { IsolateProps } from "../worker-loader/isolate-props.ts";
import type { ItxRpcTarget } from "./itx-rpc-target.ts";

/** Everything an itx handle is bound to. Fixed when the handle is minted; never taken from input. */
export interface HandleScope {
  env: Env;
  principal: string;
  /** A lookup for handles minted by `projects.get`: every call awaits it (and a failed lookup is retried). */
  projectId: string | Promise<string> | (() => Promise<string>);
  /** The context this handle fronts (a promise for `super`, whose parent is looked up). */
  path: string | Promise<string>;
  /** The context whose code or session is acting (stamped on writes, carried on calls). */
  origin: string;
  /** The client connection, for live provides. Absent inside the platform. */
  connection?: Connection;
  /** Hosts the current call already passed through. */
  depth?: number;
  /** Set when this handle's code runs in reaction to an event: stamped on its writes and calls. */
  reaction?: Reaction;
  /** Set for code running as a jail: only the jail's grants are reachable (capability-host/jail.ts). */
  confinement?: Confinement;
}

/**
 * What the implementation of a built-in gets from the handle it serves (see built-ins.ts). The
 * handle's scope never comes from the caller; these helpers read it the same way for every member.
 */
export interface HandleContext {
  readonly scope: HandleScope;
  /** The handle itself, for built-ins made of its other members. */
  readonly handle: ItxRpcTarget;
  /** Throws NOT_FOUND when code running as a jail was not granted `member`. */
  guard(member: string): void;
  /** The project and context path, once the handle's lookups settle. */
  where(): Promise<{ projectId: string; path: string }>;
  /** The capability host of this context. */
  host(): Promise<CapabilityHostStub>;
  /** This context's stream, written with this handle's stamp. */
  stream(): Promise<StreamRpcTarget>;
  /** Who is calling, as the capability host records it. */
  caller(): Caller;
  /** A handle like this one on `path`, acting as `origin`. */
  at(path: string | Promise<string>, origin: string): ItxRpcTarget;
  /** A handle bound to `scope` (for code this handle loads: see scopeOfIsolate). */
  open(scope: HandleScope): ItxRpcTarget;
}

/** What a handle's writes are stamped with. */
export function stampOfScope(scope: HandleScope): EventSource {
  return { principal: scope.principal, origin: scope.origin, ...(scope.reaction ? { reaction: scope.reaction } : {}) };
}

/** The part of a scope that code loaded for it carries in its props. */
export function isolateScope(scope: HandleScope): { principal: string; origin: string; reaction?: Reaction; confinement?: Confinement } {
  return {
    principal: scope.principal,
    origin: scope.origin,
    ...(scope.reaction ? { reaction: scope.reaction } : {}),
    ...(scope.confinement ? { confinement: scope.confinement } : {}),
  };
}

export function resolveProjectId(scope: HandleScope): Promise<string> {
  const { projectId } = scope;
  return typeof projectId === "function" ? projectId() : Promise.resolve(projectId);
}

/** The jail code acting as `origin` runs in, if that context is one (the root never is). */
export async function lookupConfinement(env: Env, projectId: string, origin: string): Promise<Confinement | undefined> {
  if (origin === "/") return undefined;
  return (await relay(hostStub(env, projectId, origin).confinement())) ?? undefined;
}

/** The scope of the itx that code loaded for `props` acts through, as `env.ITX.get()` answers it there. */
export function scopeOfIsolate(env: Env, props: IsolateProps): HandleScope {
  const { principal, projectId, origin, depth, reaction, confinement } = props;
  return { env, principal, projectId, path: props.path ?? origin, origin, depth, ...(reaction ? { reaction } : {}), ...(confinement ? { confinement } : {}) };
}
