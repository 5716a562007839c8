// Contexts: the itx handle, what can be provided on it, and its capability host. Part of the contract of record (types.ts).
import type { Description } from "./discovery.ts";
import type { Agent, AgentChat, Agents, Egress, Secrets, Workers } from "./domains.ts";
import type { Mcp, OpenApi } from "./remote-protocols.ts";
import type { Repo, Repos } from "./repos.ts";
import type { Scheduler } from "./scheduler.ts";
import type { Processors } from "./processors.ts";
import type { EventInput, EventPage, GetEventsInput, Stream, StreamEvent, WaitForEventInput } from "./streams.ts";

/** A live capability: called back over the provider's connection, in the provider's process. */
export type LiveCapability =
  | ((...args: never[]) => unknown)
  | { call(input: { path: string[]; args: unknown[] }): unknown }
  | { [member: string]: unknown };

/** One step of a durable recipe: call `path` on the previous value (the context's itx first). */
export interface ExpressionStep {
  path: string[];
  /** Omitted on the last step: the call's own arguments are used. */
  args?: unknown[];
}

/** A durable mount: replayed against the context's own itx on every call; survives disconnects. */
export interface ExpressionCapability {
  type: "itx-expression";
  steps: ExpressionStep[];
}

export interface ProvideCapabilityInput {
  /** A one-segment path. Give `name` or `path`. */
  name?: string;
  /** Mount deeper than a name to shadow one method of an inherited capability. `[]` with `capability: null` is a jail's row. */
  path?: string[];
  /** Prose for whoever finds it in `__describe()` (at most 4,000 characters). */
  instructions?: string;
  /** TypeScript source describing it (at most 16,000 characters). */
  types?: string;
  /**
   * `null` only at `path: []`: the jail row, after which code running as this context reaches only
   * the rows beside it. `{ type: "built-in" }` beside it grants the built-in its name names
   * (`append`, `getEvents`, `readEvents`, `waitForEvent`, `fetch`). See docs/security.md.
   */
  capability: LiveCapability | ExpressionCapability | SourceCapability | BuiltInGrant | null;
  /** `{ expose: true }`: reachable publicly over HTTP at `{name}--{project}.{base}` (its `fetch`). */
  http?: { expose: boolean };
}

/**
 * A durable source capability: a dynamic worker from stored source, loaded per call. Stateless
 * (a WorkerEntrypoint, acting as the caller's context) or a `durable-object` facet of the context
 * with its own SQLite (acting as that context).
 */
export interface SourceCapability {
  type: "rpc";
  worker: {
    type: "source";
    source: {
      mainModule: string;
      modules: Record<string, string>;
      /** The export to call: a WorkerEntrypoint class (default: the default export) or a DurableObject class. */
      entrypoint?: string;
      exportType?: "worker-entrypoint" | "durable-object";
    };
  };
}

/** A jail's grant of one built-in (see `ProvideCapabilityInput.capability`). */
export interface BuiltInGrant {
  type: "built-in";
}

/** What `provideCapability` answers. Disposing it revokes a live mount (not a durable one). */
export interface CapabilityProvision extends Disposable {
  path: string[];
  providedAtOffset: number;
  revoke(): boolean;
}

/** One row of a context's capability inventory. */
export interface CapabilityDescription {
  path: string[];
  /** Built-ins belong to the handle itself (scope "platform") and cannot be shadowed. */
  kind: "built-in" | "live" | "itx-expression" | "source";
  /** The context whose table holds the mount ("platform" for built-ins). */
  scope: string;
  instructions?: string;
  types?: string;
  /** False once a live mount's provider is gone; durable mounts are always connected. */
  connected: boolean;
  /** Absent for built-ins. */
  providedAtOffset?: number;
  /** Hidden by a mount at the same path nearer to this context. */
  shadowed?: boolean;
}

export interface ItxDescription extends Description {
  kind: "itx";
  context: string;
  projectId: string;
  path: string;
  name: string | null;
  capabilities: CapabilityDescription[];
}

/**
 * A handle on one context `<projectId>:<path>`. Every property that is not a member below is a
 * capability path: `itx.slack.chat.postMessage(x)` is one `invokeCapability` round trip.
 */
export interface Itx {
  __describe(): ItxDescription;
  whoami(): { projectId: string; path: string; origin: string; principal: string };
  provideCapability(input: ProvideCapabilityInput): CapabilityProvision;
  revokeCapability(input: { path: string[]; providedAtOffset?: number }): boolean;
  invokeCapability(input: { path: string[]; args: unknown[] }): unknown;
  /**
   * A child context (get-or-create): `{ path }`, `{ name }` for `/itx/<name>`, or a generated `/itx/<id>`.
   * Code acting as this context gets a handle acting as the child; anyone else keeps its own origin.
   */
  extend(input?: { name?: string; path?: string }): Itx;
  /** The parent context, skipping this context's shadows; calls keep this handle's origin. */
  super: Itx;
  /** Another context of the same project, reached with this handle's origin (writes are still stamped as this one). */
  cd(path: string): Itx;
  streams: { get(path: string): Stream };
  append(...events: EventInput[]): StreamEvent[];
  getEvents(input?: GetEventsInput): StreamEvent[];
  readEvents(input?: { afterOffset?: number; limit?: number }): EventPage;
  waitForEvent(input: WaitForEventInput): StreamEvent;
  capabilityHost: CapabilityHost;
  capabilityHosts: { get(path: string): CapabilityHost };
  /** Outbound HTTP; a `fetch` mounted on the chain shadows the default. */
  fetch(input: string | Request, init?: RequestInit): Response;
  /**
   * Runs `async (itx) => { ... }` in an isolate: its itx is this handle (this context's chain,
   * this handle's origin). Answers what it returned; a throw is SCRIPT_FAILED, past its deadline TIMEOUT.
   */
  run(script: string, options?: { timeoutMs?: number }): unknown;
  /** The project's agents. */
  agents: Agents;
  /** In an agent's own context (`/agents/...`): that agent. NOT_FOUND elsewhere. */
  agent: Agent;
  /** In an agent's own context: the agent's words to people. Only code acting as the agent may speak. */
  chat: AgentChat;
  /** The project's secrets: write-only material, referenced in requests as `getSecret("/secrets/x")`. */
  secrets: Secrets;
  /** Dynamic workers from caller-supplied source, in isolates scoped to this context. */
  workers: Workers;
  /** This context's egress road. */
  egress: Egress;
  /** Scripts on a clock at this context; each occurrence runs as whoever set the schedule. */
  scheduler: Scheduler;
  /** Config-repo processors folding this context's stream. */
  processor: Processors;
  /** The project's git repositories (`/repos/<name>`), also reachable with stock git at `/git/<project>/<path>.git`. */
  repos: Repos;
  /** The project's configuration repository, `/repos/config` (every project is created with one). */
  repo: Repo;
  /** Clients on remote MCP servers, through this context's egress road. */
  mcp: Mcp;
  /** Clients on HTTP APIs described by OpenAPI 3, through this context's egress road. */
  openapi: OpenApi;
  /**
   * The project's own worker (`worker.ts` in `/repos/config`): `itx.worker.<method>(...args)` calls
   * a method it exposes, from any context of the project; NOT_FOUND before it has a worker.
   */
  worker: ProjectWorker;
}

/** The project worker's methods, whatever its `worker.ts` exposes; each call is one dispatch. */
export interface ProjectWorker {
  __describe(): Description;
  /** Calls `path` on the worker; `itx.worker.a(x)` is `invokeCapability({ path: ["a"], args: [x] })`. */
  invokeCapability(input: { path: string[]; args: unknown[] }): unknown;
}

/** The host operations of one context. */
export interface CapabilityHost {
  path(): string;
  __describe(): ItxDescription;
  provideCapability(input: ProvideCapabilityInput): CapabilityProvision;
  revokeCapability(input: { path: string[]; providedAtOffset?: number }): boolean;
  invokeCapability(input: { path: string[]; args: unknown[] }): unknown;
  /** `async (itx) => { ... }` in this context's scope, like `Itx.run`. */
  runScript(code: string, options?: { timeoutMs?: number }): unknown;
}
