import { ItxError } from "iterate/errors";
import { AgentChatRpcTarget } from "../agent/agent-chat-rpc-target.ts";
import { isAgentPath, type AgentScope } from "../agent/agent-input.ts";
import { AgentsRpcTarget } from "../agent/agent-rpc-target.ts";
import type { BuiltInNames, Confinement } from "../capability-host/jail.ts";
import { EgressRpcTarget } from "../egress/egress-rpc-target.ts";
import { configRepoOfScope, reposOfScope } from "../repo/repos-built-in.ts";
import { McpRpcTarget } from "../mcp/mcp-rpc-target.ts";
import { OpenApiRpcTarget } from "../openapi/openapi-rpc-target.ts";
import { SchedulerRpcTarget } from "../scheduler/scheduler-rpc-target.ts";
import { ProjectWorkerRpcTarget } from "../project/project-worker-rpc-target.ts";
import { ProcessorRpcTarget } from "../processor/processor-rpc-target.ts";
import { SecretsRpcTarget } from "../secret/secrets-rpc-target.ts";
import { WorkersRpcTarget } from "../worker-loader/dynamic-workers.ts";
import { CapabilityHostRpcTarget, CapabilityHostsRpcTarget } from "./capability-host-rpc-target.ts";
import { cd, extend, invokeCapability, parentContext, provideCapability, revokeCapability, whoami } from "./context-members.ts";
import { fetchThroughChain } from "./fetch.ts";
import { isolateScope, lookupConfinement, resolveProjectId, scopeOfIsolate, stampOfScope, type HandleContext } from "./handle-scope.ts";
import type { CapabilityProvisionRpcTarget } from "./provision.ts";
import { run } from "./run.ts";
import { ProjectStreamsRpcTarget, append, getEvents, readEvents, waitForEvent } from "./stream-members.ts";

/**
 * One row of the built-ins table: a member every itx has, which no mount can take.
 * - `method` / `property`: implemented by `call` / `get`, given the handle's context.
 * - `later`: arrives with its own domain; the name is taken and reading it is UNAVAILABLE.
 * - `reserved`: a name of another surface (`ProjectRoot.create`, ...) that no mount may take.
 */
export type BuiltInRow = ReadyRow | { kind: "later" } | { kind: "reserved" };

type ReadyRow = RowFacts & ({ kind: "method"; call: (ctx: HandleContext, ...args: never[]) => unknown } | { kind: "property"; get: (ctx: HandleContext) => unknown });

interface RowFacts {
  /** Its line in `__describe().children`; a row without one is not listed. */
  summary?: string;
  /** Code running as a jail: "open" always reaches it, "grantable" with a grant row; otherwise never. */
  jail?: "open" | "grantable";
  /** A mount may shadow it (`fetch`): it is not reserved, and its implementation guards itself. */
  shadowable?: true;
}

/**
 * The built-ins of every itx, keyed by the contract's member names (`Itx` in iterate/types): every
 * other list is derived from it — the handle's members, the names a mount may not take, a jail's
 * grantable names, `__describe().children`. Adding a built-in is one row here and its module.
 * (contract.type-test.ts checks that every member of `Itx` has a row that implements it.)
 */
export const BUILT_INS = {
  whoami: { kind: "method", jail: "open", call: whoami, summary: "whoami(): project, path, origin and principal of this handle" },
  provideCapability: {
    kind: "method",
    call: (ctx: HandleContext, input: Parameters<typeof provideCapability>[2]): Promise<CapabilityProvisionRpcTarget> => provideCapability(ctx, BUILT_IN_NAMES, input),
    summary: "provideCapability({ name | path, capability, instructions?, types? }) -> provision { path, providedAtOffset, revoke() }",
  },
  revokeCapability: { kind: "method", call: revokeCapability, summary: "revokeCapability({ path, providedAtOffset? })" },
  invokeCapability: { kind: "method", jail: "open", call: invokeCapability, summary: "invokeCapability({ path, args }): the explicit form of itx.a.b(...args)" },
  extend: { kind: "method", call: extend, summary: "extend({ name? | path? }) -> a child context whose mounts shadow this one's" },
  super: { kind: "property", get: parentContext, summary: "the parent context, skipping this context's shadows" },
  cd: { kind: "method", call: cd, summary: "cd(path) -> another context of this project" },
  run: {
    kind: "method",
    call: (ctx: HandleContext, script: unknown, options?: { timeoutMs?: unknown }): Promise<unknown> => run(ctx, (props) => ctx.open(scopeOfIsolate(ctx.scope.env, props)), script, options),
    summary: "run(script): runs async (itx) => { ... } in an isolate scoped to this context and answers its result",
  },
  streams: { kind: "property", get: (ctx: HandleContext) => new ProjectStreamsRpcTarget(ctx.scope), summary: "streams.get(path) -> a stream of this project" },
  append: { kind: "method", jail: "grantable", call: append, summary: "append(...events) to this context's stream" },
  getEvents: { kind: "method", jail: "grantable", call: getEvents },
  readEvents: { kind: "method", jail: "grantable", call: readEvents, summary: "readEvents({ afterOffset, limit }) on this context's stream" },
  waitForEvent: { kind: "method", jail: "grantable", call: waitForEvent, summary: "waitForEvent({ type, payload, afterOffset, timeoutMs }) on this context's stream" },
  capabilityHost: { kind: "property", get: (ctx: HandleContext): CapabilityHostRpcTarget => new CapabilityHostRpcTarget(ctx.handle), summary: "this context's capability host" },
  capabilityHosts: {
    kind: "property",
    get: (ctx: HandleContext): CapabilityHostsRpcTarget => new CapabilityHostsRpcTarget((path) => ctx.handle.cd(path)),
    summary: "capabilityHosts.get(path) -> any context's host in this project",
  },
  fetch: { kind: "method", jail: "grantable", shadowable: true, call: fetchThroughChain, summary: "fetch(request): outbound HTTP; a mounted fetch on the chain shadows the default" },
  egress: {
    kind: "property",
    get: (ctx: HandleContext): EgressRpcTarget =>
      new EgressRpcTarget({ fetch: (input, init) => ctx.handle.fetch(input, init), provideCapability: (input) => ctx.handle.provideCapability(input) }),
    summary: "egress.fetch(request), egress.intercept(handler) -> { release() }",
  },
  workers: {
    kind: "property",
    get: (ctx: HandleContext) => new WorkersRpcTarget({ env: ctx.scope.env, props: () => isolatePropsOf(ctx), ...(ctx.scope.connection ? { held: ctx.scope.connection.runner } : {}) }),
    summary: "workers.get({ source: { files, entryPoint? } | { repo, branch | commit, include?, exclude?, entryPoint? }, entrypoint?, props? } | { source, durableObject: { className, key } }) -> a stub on that worker",
  },
  agents: {
    kind: "property",
    get: (ctx: HandleContext) => new AgentsRpcTarget(agentScope(ctx)),
    summary: "agents.get('/agents/x') -> an agent: create({ llm?, systemPrompt? }), message(text), ask({ message }), __describe(); agents.list()",
  },
  agent: { kind: "property", get: (ctx: HandleContext) => new AgentsRpcTarget(agentScope(ctx)).get(agentPath(ctx, "agent")), summary: "in an agent's context: that agent" },
  chat: { kind: "property", get: (ctx: HandleContext) => new AgentChatRpcTarget(agentScope(ctx), agentPath(ctx, "chat")), summary: "in an agent's context: chat.sendMessage(text) speaks as the agent" },
  secrets: {
    kind: "property",
    get: (ctx: HandleContext) => new SecretsRpcTarget({ env: ctx.scope.env, projectId: () => resolveProjectId(ctx.scope), principal: ctx.scope.principal, origin: ctx.scope.origin }),
    summary: "secrets.get('/secrets/x').update({ material, egress: { urls } }); reference it as getSecret(\"/secrets/x\") in requests",
  },
  worker: {
    kind: "property",
    jail: "grantable",
    get: (ctx: HandleContext) => new ProjectWorkerRpcTarget({ env: ctx.scope.env, projectId: () => resolveProjectId(ctx.scope), callerPath: ctx.caller().origin }),
    summary: "worker.<method>(...args): a method of the project's own worker (worker.ts in /repos/config), run as the root",
  },
  scheduler: {
    kind: "property",
    get: (ctx: HandleContext) => new SchedulerRpcTarget({ env: ctx.scope.env, where: () => ctx.where(), caller: ctx.caller() }),
    summary: "scheduler.set({ key, every: seconds | cron: '*/5 * * * *', script }), cancel(key), list(): scripts on a clock, each run as the setter",
  },
  repos: {
    kind: "property",
    jail: "grantable",
    get: (ctx: HandleContext) => reposOfScope(ctx.scope.env, () => resolveProjectId(ctx.scope), ctx.caller()),
    summary: "repos.create({ path: '/repos/x' }), repos.get(path), repos.list() -> git repositories: commit, readFile, listFiles, log, branches, snapshot",
  },
  repo: {
    kind: "property",
    jail: "grantable",
    get: (ctx: HandleContext) => configRepoOfScope(ctx.scope.env, () => resolveProjectId(ctx.scope), ctx.caller()),
    summary: "the project's configuration repository, /repos/config",
  },
  ai: { kind: "later" },
  mcp: {
    kind: "property",
    jail: "grantable",
    get: (ctx: HandleContext): McpRpcTarget => new McpRpcTarget({ fetch: (input, init) => ctx.handle.fetch(input, init), exaUrl: ctx.scope.env.MCP_EXA_URL }),
    summary: "mcp.connect({ url, headers? }) -> a client on a remote MCP server: __describe() lists its tools, client.<tool>(arguments) calls one; mcp.exa is Exa's",
  },
  openapi: {
    kind: "property",
    jail: "grantable",
    get: (ctx: HandleContext): OpenApiRpcTarget => new OpenApiRpcTarget({ fetch: (input, init) => ctx.handle.fetch(input, init) }),
    summary: "openapi.connect({ url | spec, baseUrl?, headers? }) -> a client on an HTTP API: __describe() lists its operations, client.<operationId>(params) calls one",
  },
  examples: { kind: "later" },
  processor: {
    kind: "property",
    get: (ctx: HandleContext) => new ProcessorRpcTarget({ env: ctx.scope.env, where: () => ctx.where(), caller: ctx.caller() }),
    summary: "processor.subscribe({ key, className }), unsubscribe(key), list(), snapshot(key): config-repo processors (StreamProcessorDurableObject exports of worker.ts) folding this context's stream",
  },
  debug: { kind: "reserved" },
  create: { kind: "reserved" },
} as const;

type Table = typeof BUILT_INS;
type MemberOf<Row> = Row extends { kind: "method"; call: (ctx: HandleContext, ...args: infer A) => infer R }
  ? (...args: A) => R
  : Row extends { kind: "property"; get: (ctx: HandleContext) => infer R }
    ? R
    : never;

/** The members the table gives the handle class (see ItxRpcTarget). */
export type BuiltInMembers = { readonly [K in keyof Table as MemberOf<Table[K]> extends never ? never : K]: MemberOf<Table[K]> };

const ROWS = Object.entries(BUILT_INS) as Array<[string, BuiltInRow]>;

/** The names a mount may not take, and the ones a jail may be granted. */
export const BUILT_IN_NAMES: BuiltInNames = {
  reserved: new Set(ROWS.filter(([, row]) => !("shadowable" in row)).map(([name]) => name)),
  grantable: new Set(ROWS.filter(([, row]) => "jail" in row && row.jail === "grantable").map(([name]) => name)),
};

/** `__describe().children`: every listed built-in, or for code in a jail the ones it reaches. */
export function builtInChildren(confinement?: Confinement): Record<string, string> {
  const reachable = (name: string, row: ReadyRow) => !confinement || row.jail === "open" || confinement.grants.includes(name);
  return Object.fromEntries(ROWS.flatMap(([name, row]) => (row.kind !== "later" && row.kind !== "reserved" && row.summary && reachable(name, row) ? [[name, row.summary]] : [])));
}

/**
 * Makes every ready row a member of `prototype` (a method or a getter; jails are checked first)
 * and every later row a getter that answers UNAVAILABLE. `contextOf` reads a handle's context.
 */
export function installBuiltIns(prototype: object, contextOf: (handle: unknown) => HandleContext): void {
  for (const [name, row] of ROWS) {
    if (row.kind === "reserved") continue;
    if (row.kind === "later") {
      Object.defineProperty(prototype, name, {
        get() {
          throw new ItxError("UNAVAILABLE", `itx.${name} is a built-in that arrives with its own domain; it is not available on this deployment yet`);
        },
      });
      continue;
    }
    // A shadowable built-in decides itself: a jail's own mount of it is its grant.
    const guarded = row.jail !== "open" && !row.shadowable;
    const enter = (handle: unknown): HandleContext => {
      const ctx = contextOf(handle);
      if (guarded) ctx.guard(name);
      return ctx;
    };
    if (row.kind === "method") {
      const call = row.call as (ctx: HandleContext, ...args: unknown[]) => unknown;
      Object.defineProperty(prototype, name, {
        configurable: true,
        writable: true,
        value: {
          [name](this: unknown, ...args: unknown[]) {
            return call(enter(this), ...args);
          },
        }[name],
      });
    } else {
      const get = row.get;
      Object.defineProperty(prototype, name, {
        configurable: true,
        get(this: unknown) {
          return get(enter(this));
        },
      });
    }
  }
}

function agentScope(ctx: HandleContext): AgentScope {
  return {
    env: ctx.scope.env,
    projectId: () => resolveProjectId(ctx.scope),
    caller: ctx.caller(),
    stamp: stampOfScope(ctx.scope),
    at: (path) => ctx.at(path, ctx.scope.origin),
  };
}

function agentPath(ctx: HandleContext, member: string): string {
  const path = ctx.scope.path;
  if (typeof path !== "string" || !isAgentPath(path)) {
    throw new ItxError("NOT_FOUND", `itx.${member} exists only in an agent's context (/agents/...); reach an agent with itx.agents.get(path)`);
  }
  return path;
}

// What code loaded through `itx.workers` is bound to: this handle's scope, one host deeper.
async function isolatePropsOf(ctx: HandleContext) {
  const where = await ctx.where();
  const confinement = await lookupConfinement(ctx.scope.env, where.projectId, ctx.scope.origin);
  return { ...isolateScope(ctx.scope), ...where, depth: (ctx.scope.depth ?? 0) + 1, ...(confinement ? { confinement } : {}) };
}
