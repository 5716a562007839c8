import { RpcTarget } from "cloudflare:workers";
import { ITX_TYPES } from "iterate/sdk";
import { relay } from "../api/relay.ts";
import type { Caller, CapabilityDescription } from "../capability-host/capability-host-api.ts";
import { hostStub } from "../capability-host/host-stub.ts";
import { notGranted } from "../capability-host/jail.ts";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import type { IsolateProps } from "../worker-loader/isolate-props.ts";
import { builtInChildren, installBuiltIns, type BuiltInMembers } from "./built-ins.ts";
import { resolveProjectId, scopeOfIsolate, stampOfScope, type HandleContext, type HandleScope } from "./handle-scope.ts";
import { installInvokeFallback } from "./invoke-fallback.ts";

/**
 * The table's members (built-ins.ts) are the handle's. The merge is safe here: `installBuiltIns`
 * defines every one of them on the prototype when the class is defined, before any instance.
 */
// oxlint-disable-next-line typescript/no-unsafe-declaration-merging
export interface ItxRpcTarget extends BuiltInMembers {}

/**
 * A handle on one context. Its built-ins come from one table (built-ins.ts); every other property
 * is a path whose call is one `invokeCapability` on the context's capability host (see
 * invoke-fallback.ts).
 */
// oxlint-disable-next-line typescript/no-unsafe-declaration-merging
export class ItxRpcTarget extends RpcTarget {
  readonly #context: HandleContext;

  constructor(scope: HandleScope) {
    super();
    this.#context = handleContext(scope, this);
  }

  static {
    installBuiltIns(ItxRpcTarget.prototype, (handle) => (handle as ItxRpcTarget).#context);
  }

  /** Identity, children, parent and the capability inventory of the whole chain, from metadata only. */
  async __describe() {
    const { projectId, path } = await this.#context.where();
    const chain = await relay(hostStub(this.#context.scope.env, projectId, path).describeChain());
    const children = builtInChildren(this.#context.scope.confinement);
    return {
      kind: "itx" as const,
      context: `${projectId}:${path}`,
      projectId,
      path,
      name: chain.name,
      parent: chain.parent ?? undefined,
      instructions:
        "A context: call any capability listed under capabilities as itx.<path>(...args). provideCapability mounts your own; " +
        "extend() makes a child context whose mounts shadow this one's path by path.",
      children,
      // Built-ins first: they resolve on the handle and no mount can shadow them.
      capabilities: [...builtInRows(children), ...chain.capabilities.filter(isCallableRow)],
      types: ITX_TYPES,
    };
  }
}
installInvokeFallback(ItxRpcTarget);

/** The itx that code loaded for `props` acts through, as `env.ITX.get()` answers it there. */
export function isolateItx(env: Env, props: IsolateProps): ItxRpcTarget {
  return new ItxRpcTarget(scopeOfIsolate(env, props));
}

function handleContext(scope: HandleScope, handle: ItxRpcTarget): HandleContext {
  const where = async () => {
    const [projectId, path] = await Promise.all([resolveProjectId(scope), scope.path]);
    return { projectId, path };
  };
  return {
    scope,
    handle,
    // Code running as a jail reaches only the built-ins the jail grants; anything else is not there.
    guard(member) {
      const confinement = scope.confinement;
      if (confinement && !confinement.grants.includes(member)) throw notGranted(member, confinement.jail);
    },
    where,
    async host() {
      const { projectId, path } = await where();
      return hostStub(scope.env, projectId, path);
    },
    async stream() {
      const { projectId, path } = await where();
      return new StreamRpcTarget(streamStub(scope.env.STREAM, `${projectId}:${path}`), stampOfScope(scope));
    },
    caller() {
      const caller: Caller = { principal: scope.principal, origin: scope.origin };
      if (scope.connection) caller.connectionId = scope.connection.id;
      if (scope.reaction) caller.reaction = scope.reaction;
      return caller;
    },
    at: (path, origin) => new ItxRpcTarget({ ...scope, path, origin }),
    open: (other) => new ItxRpcTarget(other),
  };
}

function builtInRows(children: Record<string, string>) {
  return Object.entries(children).map(([name, instructions]) => ({
    path: [name],
    kind: "built-in" as const,
    scope: "platform",
    instructions,
    connected: true,
  }));
}

// A jail's rows (the null row, built-in grants) describe the table, not something to call.
function isCallableRow(row: CapabilityDescription): row is CapabilityDescription & { kind: "live" | "itx-expression" | "source" } {
  return row.kind !== "null" && row.kind !== "built-in";
}

export { stampOfScope, resolveProjectId, type HandleScope };
