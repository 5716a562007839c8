import { RpcTarget, exports } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import { relay } from "../api/relay.ts";
import { hostStub } from "../capability-host/host-stub.ts";
import { isolateScopeKey, type IsolateProps } from "./isolate-props.ts";
import { buildWorker, parseWorkerSource, type BuiltWorker } from "./worker-build.ts";
import { LoadedWorkerRpcTarget } from "./loaded-worker-rpc-target.ts";
import { RunnerIsolateRpcTarget } from "./runner-isolate-rpc-target.ts";
import type { HeldRunner } from "./runner-client.ts";
import { directEgressVerdict, KeptVerdict } from "../egress/direct-egress-verdict.ts";
import { UNTRUSTED_LIMITS } from "./untrusted-limits.ts";
import { notGranted } from "../capability-host/jail.ts";
import { isRepoSource, readRepoSource } from "../repo/repo-worker-source.ts";
import type { RunnerLoad } from "../runner/runner-protocol.ts";
import { LIMITS } from "../limits.ts";


/**
 * A reference to a dynamic worker. Stateless: a WorkerEntrypoint export (default unless named)
 * called with `props`. Stateful: a DurableObject class hosted as a facet of the context's own
 * object under `key`, with its own SQLite.
 */
export type DynamicWorkerRef =
  | { source: unknown; entrypoint?: string; props?: Record<string, unknown> }
  | { source: unknown; durableObject: { className: string; key: string } };

interface WorkersScope {
  env: Env;
  props: () => Promise<IsolateProps>;
  /** The open session into the runner of the connection these handles are made on, if any. */
  held?: HeldRunner;
}

const COMPATIBILITY_DATE = "2026-08-01";

/** `itx.workers`: caller-supplied code in isolates scoped to this context. */
export class WorkersRpcTarget extends RpcTarget {
  readonly #scope: WorkersScope;

  constructor(scope: WorkersScope) {
    super();
    this.#scope = scope;
  }

  /**
   * A handle on the referenced worker: call its methods (and `fetch`) on it. Each call's answer
   * passes the secret scrub of this context (scrubbed-call.ts).
   */
  async get(ref: unknown): Promise<unknown> {
    if (typeof ref !== "object" || ref === null) throw new ItxError("INVALID_ARGUMENT", "workers.get takes a worker ref");
    const { source, entrypoint, props, durableObject, ...rest } = ref as Record<string, unknown>;
    if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `a worker ref has no field(s) ${Object.keys(rest).join(", ")}`);
    const isolate = await this.#scope.props();
    const built = await buildWorker(parseWorkerSource(await this.#source(source, isolate)));
    if (durableObject !== undefined) {
      const { className, key } = parseDurable(durableObject);
      if (entrypoint !== undefined || props !== undefined) throw new ItxError("INVALID_ARGUMENT", "a durable worker ref takes no entrypoint or props");
      return relay(hostStub(this.#scope.env, isolate.projectId, isolate.path ?? isolate.origin).durableWorker({ built, className, key, isolate }));
    }
    if (entrypoint !== undefined && (typeof entrypoint !== "string" || entrypoint.length > 128)) throw new ItxError("INVALID_ARGUMENT", "entrypoint names an export");
    if (props !== undefined && (typeof props !== "object" || props === null || Array.isArray(props))) throw new ItxError("INVALID_ARGUMENT", "props is an object");
    const call = { ...(entrypoint === undefined ? {} : { entrypoint: entrypoint as string }), ...(props === undefined ? {} : { props: props as Record<string, unknown> }) };
    const runner = this.#scope.env.RUNNER;
    if (runner) {
      const { env, held } = this.#scope;
      return new RunnerIsolateRpcTarget(runner, builtLoad(built, isolate), call, isolate, held, new KeptVerdict(() => directEgressVerdict(env, isolate)));
    }
    const worker = loadBuilt(this.#scope.env, built, isolate);
    // Not the entrypoint's stub itself: calls on it would never pass the secret scrub.
    return new LoadedWorkerRpcTarget(worker.getEntrypoint(call.entrypoint, call.props === undefined ? undefined : { props: call.props }), isolate);
  }

  // A repository source becomes the files it names now (repo/repo-worker-source.ts); reading a
  // repository this way is reading it, so a jail needs the repos grant.
  async #source(source: unknown, isolate: IsolateProps): Promise<unknown> {
    if (!isRepoSource(source)) return source;
    if (isolate.confinement && !isolate.confinement.grants.includes("repos")) throw notGranted("repos", isolate.confinement.jail);
    const { files, entryPoint } = await readRepoSource(this.#scope.env, isolate.projectId, source);
    return entryPoint === undefined ? { files } : { files, entryPoint };
  }
}

/**
 * Loads a built worker into an isolate of this Worker whose ITX and egress belong to
 * `isolate.origin`: a deployment's stateless workers, and durable workers' facets everywhere.
 */
export function loadBuilt(env: Env, built: BuiltWorker, isolate: IsolateProps): WorkerStub {
  return env.LOADER.get(`worker:${built.hash}:${isolateScopeKey(isolate)}`, () => ({
    compatibilityDate: COMPATIBILITY_DATE,
    mainModule: built.mainModule,
    modules: built.modules,
    env: { ITX: exports.ItxEntrypoint({ props: isolate }) },
    globalOutbound: exports.EgressEntrypoint({ props: isolate }),
    limits: { cpuMs: UNTRUSTED_LIMITS.CPU_MS },
  }));
}

/** What loads a built worker into an isolate of the runner whose ITX and egress belong to `isolate.origin`. */
export function builtLoad(built: BuiltWorker, isolate: IsolateProps): RunnerLoad {
  return {
    id: `worker:${built.hash}:${isolateScopeKey(isolate)}`,
    compatibilityDate: COMPATIBILITY_DATE,
    mainModule: built.mainModule,
    modules: built.modules,
    limits: { cpuMs: UNTRUSTED_LIMITS.CPU_MS },
    itxBinding: true,
  };
}

function parseDurable(value: unknown): { className: string; key: string } {
  const { className, key, ...rest } = (value ?? {}) as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof className !== "string" || !/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(className)) {
    throw new ItxError("INVALID_ARGUMENT", "durableObject is { className, key }");
  }
  if (typeof key !== "string" || key.length === 0 || key.length > LIMITS.DURABLE_WORKER_KEY_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `a durable worker key is 1-${LIMITS.DURABLE_WORKER_KEY_MAX_LENGTH} characters`);
  }
  return { className, key };
}
