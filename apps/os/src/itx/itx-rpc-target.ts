import { RpcTarget } from "cloudflare:workers";
import type { EventInput, EventSource, Reaction, StreamEvent } from "iterate/types";
import { ItxError, errorCode } from "iterate/errors";
import { relay } from "../api/relay.ts";
import type { Connection } from "../api/connection.ts";
import type { Env } from "../env.ts";
import type { Caller, CapabilityDescription, HostDescription } from "../capability-host/capability-host-api.ts";
import { BUILT_IN_NAMES, parseCallPath } from "../capability-host/capability-path.ts";
import { hostStub } from "../capability-host/host-stub.ts";
import { RUN_REQUESTED, RUN_SETTLED } from "../capability-host/itx-contract.ts";
import { parseStreamPath } from "../stream/coordinate.ts";
import { StreamCapability, streamStub, type EventPage } from "../stream/stream-capability.ts";
import { ensureContext } from "./context-lifecycle.ts";
import { installInvokeFallback } from "./invoke-fallback.ts";
import { CapabilityProvisionRpcTarget } from "./provision.ts";
import { bufferedRequest, sendThroughPipe, toRequest } from "../egress/egress-pipe.ts";
import { EgressRpcTarget } from "../egress/egress-rpc-target.ts";
import { SecretsRpcTarget } from "../secret/secrets-rpc-target.ts";
import { WorkersRpcTarget } from "../worker-loader/dynamic-workers.ts";
import { parseScriptSource, runScript } from "../worker-loader/run-script.ts";
import { SCRIPT_LIMITS } from "../worker-loader/script-limits.ts";
import type { IsolateProps } from "../worker-loader/isolate-props.ts";
import { notGranted, parseRow, type Confinement } from "../capability-host/jail.ts";
import { AgentChatRpcTarget, AgentRpcTarget, AgentsRpcTarget, isAgentPath, type AgentScope } from "../agent/agent-rpc-target.ts";

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

/** Built-ins that arrive with later domains: present (so a mount can never take the name) but not yet usable. */
const LATER = ["worker", "repos", "repo", "scheduler", "ai", "mcp", "openapi", "examples", "processor"];


/**
 * A handle on one context. Built-ins are members of this class; every other property is a path
 * whose call is one `invokeCapability` on the context's capability host (see invoke-fallback.ts).
 */
export class ItxRpcTarget extends RpcTarget {
  readonly #scope: HandleScope;

  constructor(scope: HandleScope) {
    super();
    this.#scope = scope;
  }

  /** Identity, children, parent and the capability inventory of the whole chain, from metadata only. */
  async __describe() {
    const { projectId, path } = await this.#where();
    const chain = await relay(hostStub(this.#scope.env, projectId, path).describeChain());
    const confinement = this.#scope.confinement;
    const children = confinement ? grantedChildren(confinement) : builtInChildren();
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

  async whoami(): Promise<{ projectId: string; path: string; origin: string; principal: string }> {
    const { projectId, path } = await this.#where();
    return { projectId, path, origin: this.#scope.origin, principal: this.#scope.principal };
  }

  /** Mounts a capability on this context. Live values are called back over your connection. */
  async provideCapability(input: {
    name?: unknown;
    path?: unknown;
    instructions?: unknown;
    types?: unknown;
    capability?: unknown;
    http?: unknown;
  }): Promise<CapabilityProvisionRpcTarget> {
    if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "provideCapability takes { name | path, capability, instructions?, types?, http? }");
    const { name, path, instructions, types, capability, http, ...rest } = input;
    if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `provideCapability has no field(s) ${Object.keys(rest).join(", ")}`);
    this.#guard("provideCapability");
    if (capability === undefined) throw new ItxError("INVALID_ARGUMENT", "provideCapability needs a capability");
    const mountPath = parseRow({ name, path }, capability).path;
    const caller = this.#caller();
    const where = await this.#where();
    const host = hostStub(this.#scope.env, where.projectId, where.path);
    const live = typeof capability === "function" || (typeof capability === "object" && capability !== null && !("type" in capability));
    if (live) this.#scope.connection?.assertMayTrack(where.projectId, where.path);
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
    if (provided.kind === "live") this.#scope.connection?.trackLiveProvide(this.#scope.env, where.projectId, where.path);
    return new CapabilityProvisionRpcTarget({
      path: provided.path,
      providedAtOffset: provided.providedAtOffset,
      live: provided.kind === "live",
      revoke: () => relay(host.revoke({ path: provided.path, providedAtOffset: provided.providedAtOffset, caller })),
      sessionEnded: () => this.#scope.connection?.closed ?? false,
    });
  }

  async revokeCapability(input: { path: unknown; providedAtOffset?: number }): Promise<boolean> {
    this.#guard("revokeCapability");
    if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "revokeCapability takes { path, providedAtOffset? }");
    const request: { path: unknown; providedAtOffset?: number; caller: Caller } = { path: input.path, caller: this.#caller() };
    if (input.providedAtOffset !== undefined) request.providedAtOffset = input.providedAtOffset;
    return relay((await this.#host()).revoke(request));
  }

  /** Explicit dynamic dispatch; `itx.a.b(x)` is the same as `invokeCapability({ path: ["a", "b"], args: [x] })`. */
  async invokeCapability(input: { path: unknown; args?: unknown }): Promise<unknown> {
    if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "invokeCapability takes { path, args }");
    const path = parseCallPath(input.path);
    const args = input.args ?? [];
    return relay((await this.#host()).invoke({ path, args, caller: this.#caller(), depth: this.#scope.depth ?? 0 }));
  }

  /**
   * A child context (get-or-create): `{ path }` you choose, `{ name }` for `/itx/<name>`, or a
   * generated `/itx/<id>`. Its mounts shadow this context's path by path; misses fall through.
   */
  async extend(input: { name?: unknown; path?: unknown } = {}): Promise<ItxRpcTarget> {
    this.#guard("extend");
    if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "extend takes { name? } or { path? }");
    const { name, path, ...rest } = input;
    if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `extend has no field(s) ${Object.keys(rest).join(", ")}`);
    if (name !== undefined && path !== undefined) throw new ItxError("INVALID_ARGUMENT", "extend takes a name or a path, not both");
    if (name !== undefined && (typeof name !== "string" || !/^[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,127}$/.test(name))) {
      throw new ItxError("INVALID_ARGUMENT", "an extend name is 1-128 characters of letters, digits and . _ ~ -");
    }
    const childPath = path !== undefined ? parseStreamPath(path) : `/itx/${(name as string | undefined) ?? crypto.randomUUID()}`;
    const where = await this.#where();
    if (childPath === where.path || childPath === "/") throw new ItxError("INVALID_ARGUMENT", `${childPath} cannot be a child of ${where.path}`);
    const parent = await relay(hostStub(this.#scope.env, where.projectId, where.path).birth());
    if (parent.ancestors.includes(childPath)) throw new ItxError("INVALID_ARGUMENT", `${childPath} is an ancestor of ${where.path}`);
    const born = await ensureContext(this.#scope.env, {
      projectId: where.projectId,
      path: childPath,
      name: (name as string | undefined) ?? childPath.split("/").at(-1) ?? childPath,
      parent: where.path,
      ancestors: [...parent.ancestors, where.path],
      caller: this.#caller(),
    });
    // Narrowing is construction: code acting as this context may act as a child it made (or that
    // was born under it). Anyone else keeps acting as itself, so extending an existing context
    // elsewhere (`extend({ path: "/agents/b" })`) never lends its name.
    if (this.#scope.origin !== where.path) return this.#at(childPath, this.#scope.origin);
    const parentOfChild = born === "born-here" ? where.path : (await relay(hostStub(this.#scope.env, where.projectId, childPath).birth())).parent;
    return this.#at(childPath, parentOfChild === where.path ? childPath : this.#scope.origin);
  }

  /** The parent context: the same chain with this context's shadows skipped. Calls keep this origin. */
  get super(): ItxRpcTarget {
    this.#guard("super");
    const parent = (async () => {
      const { parent: found } = await relay((await this.#host()).birth());
      if (found === null) throw new ItxError("NOT_FOUND", "the root context has no parent");
      return found;
    })();
    parent.catch(() => undefined); // a handle nobody calls must not leave an unhandled rejection
    return new ItxRpcTarget({ ...this.#scope, path: parent });
  }

  /**
   * Another context of the same project. The handle still acts as this one: its writes and calls
   * carry this handle's origin, whichever context they reach.
   */
  cd(path: unknown): ItxRpcTarget {
    this.#guard("cd");
    const target = parseStreamPath(path);
    return this.#at(target, this.#scope.origin);
  }

  /** The project's streams; writes are stamped with this context as origin. */
  get streams(): ProjectStreams {
    this.#guard("streams");
    return new ProjectStreams(this.#scope);
  }

  /** Appends to this context's own stream as one commit. */
  async append(...events: EventInput[]): Promise<StreamEvent[]> {
    this.#guard("append");
    return (await this.#stream()).append(...events);
  }

  async getEvents(input: unknown = {}): Promise<StreamEvent[]> {
    this.#guard("getEvents");
    return (await this.#stream()).getEvents(input);
  }

  async readEvents(input: { afterOffset?: number; limit?: number } = {}): Promise<EventPage> {
    this.#guard("readEvents");
    return (await this.#stream()).readEvents(input);
  }

  async waitForEvent(input: unknown): Promise<StreamEvent> {
    this.#guard("waitForEvent");
    return (await this.#stream()).waitForEvent(input);
  }

  /**
   * Runs `async (itx) => { ... }` in an isolate whose itx is this handle: it sees this context's
   * chain and acts with this handle's origin. Recorded as itx/run-requested then itx/run-settled on
   * this context's stream. A throw is SCRIPT_FAILED with the script's own message; past its
   * deadline, TIMEOUT.
   *
   * @example
   * await itx.run("async (itx) => (await itx.whoami()).path"); // "/"
   */
  async run(script: unknown, options: { timeoutMs?: unknown } = {}): Promise<unknown> {
    this.#guard("run");
    const source = parseScriptSource(script);
    const timeoutMs = parseTimeout(options?.timeoutMs);
    const { projectId, path } = await this.#where();
    const confinement = await lookupConfinement(this.#scope.env, projectId, this.#scope.origin);
    const stream = streamStub(this.#scope.env.STREAM, `${projectId}:${path}`);
    const stamp: EventSource = { ...stampOfScope(this.#scope), platform: "run" };
    // The script starts only once its request is durable, and not at all if the append is refused
    // (LOOP_LIMIT). The settled fact follows within the run, so the context's processors are sent
    // both in one delivery.
    const requested = await relay(stream.append({ events: [{ type: RUN_REQUESTED, payload: { script: source } }], stamp, answer: "receipt", holdDelivery: true }));
    const requestOffset = requested.offsets[0] ?? 0;
    const props: IsolateProps = { ...isolateScope(this.#scope), path, projectId, depth: (this.#scope.depth ?? 0) + 1, ...(confinement ? { confinement } : {}) };
    const outcome = await runScript(
      this.#scope.env,
      props,
      isolateItx(this.#scope.env, props),
      source,
      timeoutMs,
    );
    const settled = { type: RUN_SETTLED, payload: { requestOffset, ...outcome }, idempotencyKey: `itx/run-settled:${requestOffset}` };
    await relay(stream.append({ events: [settled], stamp, answer: "receipt" }));
    if (outcome.status === "failed") throw new ItxError(outcome.error.code, outcome.error.message, { details: { requestOffset } });
    return outcome.result;
  }

  /** The project's agents: `agents.get("/agents/x")` is a handle; `create()` makes the agent. */
  get agents(): AgentsRpcTarget {
    this.#guard("agents");
    return new AgentsRpcTarget(this.#agentScope());
  }

  /** On an agent's own context: that agent. */
  get agent(): AgentRpcTarget {
    this.#guard("agent");
    return new AgentsRpcTarget(this.#agentScope()).get(this.#agentPath("agent"));
  }

  /** On an agent's own context: `chat.sendMessage(text)` speaks as the agent. */
  get chat(): AgentChatRpcTarget {
    this.#guard("chat");
    return new AgentChatRpcTarget(this.#agentScope(), this.#agentPath("chat"));
  }

  #agentPath(member: string): string {
    const path = this.#scope.path;
    if (typeof path !== "string" || !isAgentPath(path)) {
      throw new ItxError("NOT_FOUND", `itx.${member} exists only in an agent's context (/agents/...); reach an agent with itx.agents.get(path)`);
    }
    return path;
  }

  #agentScope(): AgentScope {
    return {
      env: this.#scope.env,
      projectId: () => resolveProjectId(this.#scope),
      caller: this.#caller(),
      stamp: stampOfScope(this.#scope),
      at: (path) => this.#at(path, this.#scope.origin),
    };
  }

  /** The project's secrets: write-only material, referenced in requests by placeholder. */
  get secrets(): SecretsRpcTarget {
    this.#guard("secrets");
    return new SecretsRpcTarget({
      env: this.#scope.env,
      projectId: () => resolveProjectId(this.#scope),
      principal: this.#scope.principal,
      origin: this.#scope.origin,
    });
  }

  /** Dynamic workers: caller-supplied code (TypeScript included) in isolates scoped to this context. */
  get workers(): WorkersRpcTarget {
    this.#guard("workers");
    return new WorkersRpcTarget({
      env: this.#scope.env,
      props: async () => {
        const where = await this.#where();
        const confinement = await lookupConfinement(this.#scope.env, where.projectId, this.#scope.origin);
        return { ...isolateScope(this.#scope), ...where, depth: (this.#scope.depth ?? 0) + 1, ...(confinement ? { confinement } : {}) };
      },
    });
  }

  /** This context's egress road: `fetch`, and `intercept(handler)` for a live replacement. */
  get egress(): EgressRpcTarget {
    this.#guard("egress");
    return new EgressRpcTarget({
      fetch: (input, init) => this.fetch(input, init),
      provideCapability: (input) => this.provideCapability(input),
    });
  }

  /** This context's capability host. */
  get capabilityHost(): CapabilityHostRpcTarget {
    this.#guard("capabilityHost");
    return new CapabilityHostRpcTarget(this);
  }

  /** Any context's capability host in this project; `get("/")` mounts project-wide. */
  get capabilityHosts(): { get(path: unknown): CapabilityHostRpcTarget } {
    this.#guard("capabilityHosts");
    return new CapabilityHostCollection((path) => this.cd(path));
  }

  /**
   * Outbound HTTP. A `fetch` mounted anywhere on the chain takes the call (a shadow can reach the
   * default through `itx.super.fetch`); otherwise the platform's default pipe sends it.
   */
  async fetch(input: unknown, init?: unknown): Promise<Response> {
    // Sending a request over RPC uses its body up, and on a miss the pipe needs it again: the body
    // is read once here (at most EGRESS_BODY_MAX_BYTES) and each road gets its own request.
    const copy = await bufferedRequest(toRequest(input, init));
    const request = copy();
    // Most contexts shadow nothing: ask first (a boolean), rather than a call that throws NOT_FOUND.
    if (!(await relay((await this.#host()).provides(["fetch"])))) {
      this.#guard("fetch"); // a jail's own fetch mount is its grant; the pipe needs a built-in grant
      const projectId = await resolveProjectId(this.#scope);
      return sendThroughPipe(this.#scope.env, this.#egressScope(projectId), request);
    }
    try {
      return (await this.invokeCapability({ path: ["fetch"], args: [copy()] })) as Response;
    } catch (error) {
      if (errorCode(error) === "NOT_FOUND" && (error as { details?: { unresolved?: string } }).details?.unresolved === "fetch") {
        this.#guard("fetch");
        const projectId = await resolveProjectId(this.#scope);
        return sendThroughPipe(this.#scope.env, this.#egressScope(projectId), request);
      }
      throw error;
    }
  }

  #egressScope(projectId: string) {
    return { projectId, origin: this.#scope.origin, principal: this.#scope.principal, ...(this.#scope.confinement ? { jailed: true } : {}) };
  }

  // Code running as a jail reaches only the built-ins the jail grants; anything else is not there.
  #guard(member: string): void {
    const confinement = this.#scope.confinement;
    if (confinement && !confinement.grants.includes(member)) throw notGranted(member, confinement.jail);
  }

  #at(path: string, origin: string): ItxRpcTarget {
    return new ItxRpcTarget({ ...this.#scope, path, origin });
  }

  async #where(): Promise<{ projectId: string; path: string }> {
    const [projectId, path] = await Promise.all([resolveProjectId(this.#scope), this.#scope.path]);
    return { projectId, path };
  }

  async #host() {
    const { projectId, path } = await this.#where();
    return hostStub(this.#scope.env, projectId, path);
  }

  async #stream(): Promise<StreamCapability> {
    const { projectId, path } = await this.#where();
    return new StreamCapability(streamStub(this.#scope.env.STREAM, `${projectId}:${path}`), stampOfScope(this.#scope));
  }

  #caller(): Caller {
    const caller: Caller = { principal: this.#scope.principal, origin: this.#scope.origin };
    if (this.#scope.connection) caller.connectionId = this.#scope.connection.id;
    if (this.#scope.reaction) caller.reaction = this.#scope.reaction;
    return caller;
  }
}

for (const name of LATER) {
  Object.defineProperty(ItxRpcTarget.prototype, name, {
    get() {
      throw new ItxError("UNAVAILABLE", `itx.${name} is a built-in that arrives with its own domain; it is not available on this deployment yet`);
    },
  });
}
installInvokeFallback(ItxRpcTarget);

/** `itx.capabilityHost`: the host operations of one context. */
export class CapabilityHostRpcTarget extends RpcTarget {
  readonly #itx: ItxRpcTarget;

  constructor(itx: ItxRpcTarget) {
    super();
    this.#itx = itx;
  }

  async path(): Promise<string> {
    return (await this.#itx.whoami()).path;
  }

  __describe() {
    return this.#itx.__describe();
  }

  provideCapability(input: Parameters<ItxRpcTarget["provideCapability"]>[0]) {
    return this.#itx.provideCapability(input);
  }

  revokeCapability(input: Parameters<ItxRpcTarget["revokeCapability"]>[0]) {
    return this.#itx.revokeCapability(input);
  }

  invokeCapability(input: Parameters<ItxRpcTarget["invokeCapability"]>[0]) {
    return this.#itx.invokeCapability(input);
  }

  /** `async (itx) => { ... }` in this context's scope. */
  runScript(code: unknown, options?: { timeoutMs?: unknown }) {
    return this.#itx.run(code, options);
  }
}
installInvokeFallback(CapabilityHostRpcTarget);

/** `itx.streams`: the streams of this handle's project, written with this handle's origin. */
class ProjectStreams extends RpcTarget {
  readonly #scope: HandleScope;

  constructor(scope: HandleScope) {
    super();
    this.#scope = scope;
  }

  async get(path: unknown): Promise<StreamCapability> {
    const streamPath = parseStreamPath(path);
    const projectId = await resolveProjectId(this.#scope);
    return new StreamCapability(streamStub(this.#scope.env.STREAM, `${projectId}:${streamPath}`), stampOfScope(this.#scope));
  }
}

class CapabilityHostCollection extends RpcTarget {
  readonly #open: (path: unknown) => ItxRpcTarget;

  constructor(open: (path: unknown) => ItxRpcTarget) {
    super();
    this.#open = open;
  }

  get(path: unknown): CapabilityHostRpcTarget {
    return new CapabilityHostRpcTarget(this.#open(path));
  }
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

function builtInChildren(): Record<string, string> {
  return {
    whoami: "whoami(): project, path, origin and principal of this handle",
    provideCapability: "provideCapability({ name | path, capability, instructions?, types? }) -> provision { path, providedAtOffset, revoke() }",
    revokeCapability: "revokeCapability({ path, providedAtOffset? })",
    invokeCapability: "invokeCapability({ path, args }): the explicit form of itx.a.b(...args)",
    extend: "extend({ name? | path? }) -> a child context whose mounts shadow this one's",
    super: "the parent context, skipping this context's shadows",
    cd: "cd(path) -> another context of this project",
    run: "run(script): runs async (itx) => { ... } in an isolate scoped to this context and answers its result",
    streams: "streams.get(path) -> a stream of this project",
    append: "append(...events) to this context's stream",
    readEvents: "readEvents({ afterOffset, limit }) on this context's stream",
    waitForEvent: "waitForEvent({ type, payload, afterOffset, timeoutMs }) on this context's stream",
    capabilityHost: "this context's capability host",
    capabilityHosts: "capabilityHosts.get(path) -> any context's host in this project",
    fetch: "fetch(request): outbound HTTP; a mounted fetch on the chain shadows the default",
    egress: "egress.fetch(request), egress.intercept(handler) -> { release() }",
    workers: "workers.get({ source: { files, entryPoint? }, entrypoint?, props? } | { source, durableObject: { className, key } }) -> a stub on that worker",
    agents: "agents.get('/agents/x') -> an agent: create({ llm?, systemPrompt? }), message(text), ask({ message }), __describe(); agents.list()",
    agent: "in an agent's context: that agent",
    chat: "in an agent's context: chat.sendMessage(text) speaks as the agent",
    secrets: "secrets.get('/secrets/x').update({ material, egress: { urls } }); reference it as getSecret(\"/secrets/x\") in requests",
  };
}

const ITX_TYPES = `export interface Itx {
  __describe(): Promise<unknown>;
  whoami(): Promise<{ projectId: string; path: string; origin: string; principal: string }>;
  provideCapability(input: { name?: string; path?: string[]; capability: unknown; instructions?: string; types?: string }): Promise<{ path: string[]; providedAtOffset: number; revoke(): Promise<boolean> }>;
  revokeCapability(input: { path: string[]; providedAtOffset?: number }): Promise<boolean>;
  invokeCapability(input: { path: string[]; args: unknown[] }): Promise<unknown>;
  extend(input?: { name?: string; path?: string }): Itx;
  super: Itx;
  cd(path: string): Itx;
  [capability: string]: any;
}`;

// A jail's rows (the null row, built-in grants) describe the table, not something to call.
function isCallableRow(row: CapabilityDescription): row is CapabilityDescription & { kind: "live" | "itx-expression" | "source" } {
  return row.kind !== "null" && row.kind !== "built-in";
}

// What code in a jail sees of the built-ins: identity, calls, and its grants.
function grantedChildren(confinement: Confinement): Record<string, string> {
  const all = builtInChildren();
  return Object.fromEntries(Object.entries(all).filter(([name]) => ["whoami", "invokeCapability", ...confinement.grants].includes(name)));
}

/** The jail code acting as `origin` runs in, if that context is one (the root never is). */
async function lookupConfinement(env: Env, projectId: string, origin: string): Promise<Confinement | undefined> {
  if (origin === "/") return undefined;
  return (await relay(hostStub(env, projectId, origin).confinement())) ?? undefined;
}

function parseTimeout(value: unknown): number {
  if (value === undefined) return SCRIPT_LIMITS.TIMEOUT_MS;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > SCRIPT_LIMITS.TIMEOUT_MS) {
    throw new ItxError("INVALID_ARGUMENT", `timeoutMs is an integer from 1 to ${SCRIPT_LIMITS.TIMEOUT_MS}`, { details: { limit: "TIMEOUT_MS" } });
  }
  return value;
}

/** The itx that code loaded for `props` acts through, as `env.ITX.get()` answers it there. */
export function isolateItx(env: Env, props: IsolateProps): ItxRpcTarget {
  const { principal, projectId, origin, depth, reaction, confinement } = props;
  return new ItxRpcTarget({ env, principal, projectId, path: props.path ?? origin, origin, depth, ...(reaction ? { reaction } : {}), ...(confinement ? { confinement } : {}) });
}

/** What a handle's writes are stamped with. */
export function stampOfScope(scope: HandleScope): EventSource {
  return { principal: scope.principal, origin: scope.origin, ...(scope.reaction ? { reaction: scope.reaction } : {}) };
}

function isolateScope(scope: HandleScope): { principal: string; origin: string; reaction?: Reaction; confinement?: Confinement } {
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


export { BUILT_IN_NAMES, type HostDescription };
