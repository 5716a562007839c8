import { exports } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import { ITERATE_WORKER_MODULE } from "iterate/sdk";
import { contentHash } from "../worker-loader/content-hash.ts";
import { isolateScopeKey, type IsolateProps } from "../worker-loader/isolate-props.ts";
import { RESERVED_PATH_SEGMENTS } from "./capability-path.ts";
import { sourceSchema, type CapabilitySource } from "./itx-contract.ts";
import type { RunnerLoad } from "../runner/runner-protocol.ts";
import { UNTRUSTED_LIMITS } from "../worker-loader/untrusted-limits.ts";
import { LIMITS, limitDetails } from "../limits.ts";


const COMPATIBILITY_DATE = "2026-08-01";

/**
 * Reads `{ type: "rpc", worker: { type: "source", source } }`, the durable source address of
 * seed 000, and answers its validated source.
 */
export function parseSourceAddress(capability: Record<string, unknown>): CapabilitySource {
  const { type: _type, worker, ...rest } = capability;
  if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `a source address has no field(s) ${Object.keys(rest).join(", ")}`);
  const { type, source, ...more } = (worker ?? {}) as Record<string, unknown>;
  if (Object.keys(more).length > 0 || type !== "source") {
    throw new ItxError("INVALID_ARGUMENT", 'a capability address is { type: "rpc", worker: { type: "source", source: { mainModule, modules, entrypoint?, exportType? } } }');
  }
  const parsed = sourceSchema.safeParse(source);
  if (!parsed.success) throw new ItxError("INVALID_ARGUMENT", `source must be { mainModule, modules: { name: code }, entrypoint?, exportType? }: ${parsed.error.issues[0]?.message ?? ""}`);
  const names = Object.keys(parsed.data.modules);
  if (names.length === 0 || names.length > LIMITS.SOURCE_MODULES_MAX) {
    throw new ItxError("INVALID_ARGUMENT", `source has 1-${LIMITS.SOURCE_MODULES_MAX} modules`, { details: limitDetails("SOURCE_MODULES_MAX") });
  }
  if (!names.includes(parsed.data.mainModule)) throw new ItxError("INVALID_ARGUMENT", `mainModule ${parsed.data.mainModule} is not among the modules`);
  const bytes = Object.values(parsed.data.modules).reduce((total, code) => total + code.length, 0);
  if (bytes > LIMITS.SOURCE_MAX_BYTES) throw new ItxError("INVALID_ARGUMENT", `source is at most ${LIMITS.SOURCE_MAX_BYTES} bytes`, { details: limitDetails("SOURCE_MAX_BYTES") });
  return parsed.data;
}

/**
 * Loads a source capability's isolate for one origin. The isolate's `env.ITX` and bare `fetch()`
 * belong to the context the call started at (origin dial-back): a fetch shadow on the caller's
 * extension catches what an inherited capability sends.
 */
export async function loadSource(env: Env, source: CapabilitySource, props: IsolateProps): Promise<WorkerStub> {
  const load = await sourceLoad(source, props);
  return env.LOADER.get(load.id, () => ({
    compatibilityDate: load.compatibilityDate,
    mainModule: load.mainModule,
    modules: load.modules,
    env: { ITX: exports.ItxEntrypoint({ props }) },
    globalOutbound: exports.EgressEntrypoint({ props }),
    limits: load.limits,
  }));
}

/** What loads a source capability's isolate for one origin, here or in the runner. */
export async function sourceLoad(source: CapabilitySource, props: IsolateProps): Promise<RunnerLoad> {
  return {
    id: `source:${await contentHash(JSON.stringify(source), 16)}:${isolateScopeKey(props)}`,
    compatibilityDate: COMPATIBILITY_DATE,
    mainModule: source.mainModule,
    // Loaded code may `import { IterateEntrypoint } from "iterate/worker"`: the deployment's own SDK.
    modules: { "iterate/worker": { js: ITERATE_WORKER_MODULE }, ...source.modules },
    limits: { cpuMs: UNTRUSTED_LIMITS.CPU_MS },
    itxBinding: true,
  };
}

/** Replays the rest of a call path onto an entrypoint's (or facet's) real members. */
export async function callMembers(target: unknown, remainder: string[], args: unknown[]): Promise<unknown> {
  if (remainder.length === 0) throw new ItxError("NOT_FOUND", "call one of this capability's methods");
  let parent: unknown = target;
  for (const segment of remainder) {
    if (RESERVED_PATH_SEGMENTS.has(segment)) throw new ItxError("INVALID_ARGUMENT", `"${segment}" is reserved`);
  }
  for (const segment of remainder.slice(0, -1)) parent = (parent as Record<string, unknown>)[segment];
  const last = remainder.at(-1) as string;
  return (parent as Record<string, (...args: unknown[]) => unknown>)[last]?.(...args);
}
