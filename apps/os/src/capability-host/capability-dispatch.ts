import { ItxError, errorCode } from "iterate/errors";
import type { RunnerFacet } from "../runner/runner-protocol.ts";
import type { HeldRunner } from "../worker-loader/runner-client.ts";
import { invokeInRunner } from "../worker-loader/runner-isolate-rpc-target.ts";
import { scrubbedCall } from "../worker-loader/scrubbed-call.ts";
import type { Caller } from "./capability-host-api.ts";
import { pathKey } from "./capability-path.ts";
import { replayExpression } from "./expression.ts";
import type { CapabilitySource, Mount } from "./itx-contract.ts";
import type { Confinement } from "./jail.ts";
import { callLive, disconnectedError, isDisconnectError } from "./live-capability.ts";
import { callMembers, loadSource, sourceLoad } from "./source-capability.ts";

/** What dispatching a call to one of its mounts needs from a capability host. */
export interface DispatchHost {
  env: Env;
  projectId: string;
  /** The host's context path. */
  path: string;
  /** The live value kept for the mount provided at `providedAtOffset`, and the connection it came over. */
  live(providedAtOffset: number): { value: unknown; connectionId: string } | undefined;
  /** The provider's connection is gone: mark its mounts disconnected, in the background. */
  connectionLost(connectionId: string): void;
  /** The jail code acting as `origin` runs in, if any. */
  confinementOf(origin: string): Promise<Confinement | undefined>;
  facets: DurableObjectFacets;
  /** The host's open session into the runner, for calls on sources (local OS only). */
  runner?: HeldRunner;
}

/** Calls `remainder` of the mount that answered a call's path, the way its kind says. */
export async function dispatchToMount(host: DispatchHost, mount: Mount, remainder: string[], args: unknown[], caller: Caller, depth: number): Promise<unknown> {
  if (mount.kind === "itx-expression") {
    return replayExpression({
      env: host.env,
      projectId: host.projectId,
      path: host.path,
      steps: mount.expression ?? [],
      remainder,
      args,
      caller,
      provider: mount.provider,
      depth: depth + 1,
    });
  }
  if (mount.kind === "source" && mount.source) return callSource(host, mount, mount.source, remainder, args, caller, depth);
  const entry = host.live(mount.providedAtOffset);
  if (mount.disconnected || !entry) throw disconnectedError(mount.path, host.path);
  const shape = mount.live?.shape ?? "members";
  try {
    return await callLive(shape, entry.value, remainder, args);
  } catch (error) {
    if (errorCode(error) === undefined && isDisconnectError(error)) {
      host.connectionLost(entry.connectionId);
      throw disconnectedError(mount.path, host.path);
    }
    throw error;
  }
}

/** The refusal for a path nothing on the chain provides. */
export function notProvided(path: string[], origin: string): ItxError {
  return new ItxError("NOT_FOUND", `no capability ${path.join(".")} is provided to ${origin} or its ancestors`, {
    details: { unresolved: path.join(".") },
  });
}

// Stateless sources run in an isolate of the calling origin; durable-object sources are facets
// of this context (hosted by its object, or locally by the runner), one per mount, each with its own SQLite.
async function callSource(host: DispatchHost, mount: Mount, source: CapabilitySource, remainder: string[], args: unknown[], caller: Caller, depth: number): Promise<unknown> {
  const durable = source.exportType === "durable-object";
  const origin = durable ? host.path : caller.origin;
  const confinement = await host.confinementOf(origin);
  const base = { principal: caller.principal, projectId: host.projectId, origin, depth: depth + 1 };
  const props = confinement ? { ...base, confinement } : base;
  if (durable && !source.entrypoint) throw new ItxError("INVALID_ARGUMENT", "a durable-object source names its class in entrypoint");
  const key = `capability:${pathKey(mount.path)}`;
  // Locally every source runs in the runner process, a durable one as a facet of the runner's
  // host for this context (docs/decisions/0007-untrusted-code-in-a-runner-process.md).
  // What the code answers passes the secret scrub of the scope it acted as (scrubbed-call.ts).
  if (host.env.RUNNER) {
    const { RUNNER: runner } = host.env;
    const target = durable ? { facet: runnerFacet(host.projectId, host.path, key, source.entrypoint as string) } : source.entrypoint === undefined ? {} : { entrypoint: source.entrypoint };
    const load = await sourceLoad(source, props);
    return scrubbedCall(props, () => invokeInRunner(runner, load, { ...target, path: remainder, args }, props, host.runner));
  }
  const worker = await loadSource(host.env, source, props);
  if (!durable) return scrubbedCall(props, () => callMembers(worker.getEntrypoint(source.entrypoint), remainder, args));
  const className = source.entrypoint as string;
  return scrubbedCall(props, () => callMembers(host.facets.get(key, () => ({ class: worker.getDurableObjectClass(className) })), remainder, args));
}

/** A facet of the context at `path`, hosted by the runner: its host is named by that context alone. */
export function runnerFacet(projectId: string, path: string, key: string, className: string): RunnerFacet {
  return { host: JSON.stringify([projectId, path]), key, className };
}
