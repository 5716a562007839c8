/**
 * The public contract of iterate: handwritten and import-free. Clients, scripts, loaded workers
 * and the platform program against these shapes. When prose and this file disagree, this file wins.
 * @module
 */

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** The codes an error can carry across RPC. See `iterate/errors` for the helpers that read them. */
export type ErrorCode =
  | "NOT_FOUND"
  | "UNAUTHENTICATED"
  | "INVALID_ARGUMENT"
  | "CAPABILITY_DISCONNECTED"
  | "IDEMPOTENCY_CONFLICT"
  | "OFFSET_CONFLICT"
  | "LOOP_LIMIT"
  | "EGRESS_REFUSED"
  | "SCRIPT_FAILED"
  | "TIMEOUT"
  | "RESOURCE_EXHAUSTED"
  | "PERMISSION_DENIED"
  | "LIMIT_EXCEEDED"
  | "UNAVAILABLE"
  | "INTERNAL";

/** What a coded error looks like after it crossed Cap'n Web. */
export interface CodedError extends Error {
  code: ErrorCode;
  details?: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Authentication
// ---------------------------------------------------------------------------------------------

/** The deployment's admin secret: full authority over every project. */
export interface AdminSecretCredentials {
  type: "admin-secret";
  secret: string;
}

/** An OAuth access token issued for a user. */
export interface BearerCredentials {
  type: "bearer";
  token: string;
}

/**
 * Admin-gated: act as `principal` with access to exactly `projectIds`. Test suites use it to
 * exercise per-project confinement without minting real users.
 */
export interface ImpersonateCredentials {
  type: "impersonate";
  secret: string;
  principal: string;
  projectIds: string[];
}

/** A short-lived grant bound to one deployment (and usually one project). */
export interface OperatorSessionCredentials {
  type: "operator-session";
  token: string;
}

/**
 * The browser's same-origin lane: authenticates with the session cookie that `POST /auth/sign-in`
 * set, sent by the browser on the WebSocket handshake. Page script never holds a secret.
 */
export interface SessionCookieCredentials {
  type: "session-cookie";
}

export type Credentials =
  | AdminSecretCredentials
  | BearerCredentials
  | ImpersonateCredentials
  | OperatorSessionCredentials
  | SessionCookieCredentials;

/** Who a session acts as. Admins reach every project; others only their `projectIds`. */
export type Principal =
  | { kind: "admin"; id: "admin" }
  | { kind: "impersonated"; id: string; projectIds: string[] };

// ---------------------------------------------------------------------------------------------
// Discovery
// ---------------------------------------------------------------------------------------------

/** The envelope every node answers `__describe()` with; nodes add their own fields beside these. */
export interface Description {
  /** What kind of node this is: "unauthenticated", "session", "itx", ... */
  kind: string;
  /** Prose for whoever holds this node: what it is and how to use it. */
  instructions: string;
  /** One line per member, the map of what can be reached from here. */
  children: Record<string, string>;
  /** Where this node sits, when it has a parent. */
  parent?: string;
  /** TypeScript source describing the node, when it has one. */
  types?: string;
}

export interface SessionDescription extends Description {
  kind: "session";
  principal: Principal;
}

// ---------------------------------------------------------------------------------------------
// The object tree
// ---------------------------------------------------------------------------------------------

/** What `/api` exposes before authentication: nothing but `authenticate`. */
export interface UnauthenticatedRoot {
  /** Checks credentials once and hands back a Session. Fails with `UNAUTHENTICATED`. */
  authenticate(credentials: Credentials): Session;
}

/** A freshly issued bearer token: the text is shown only here. */
export interface IssuedTokenAnswer {
  token: string;
  tokenId: string;
  expiresInSeconds: number;
}

/** What the deployment records of an issued token (never its text). */
export interface IssuedToken {
  tokenId: string;
  principal: string;
  projectIds: string[];
  /** Epoch seconds. */
  expiresAt: number;
  issuedAt: string;
  revokedAt?: string;
}

/** `session.tokens` (admin only). A revoked token fails at its next authenticate, and sessions open with it end. */
export interface Tokens {
  issue(input: { principal: string; projectIds: string[]; ttlSeconds?: number }): IssuedTokenAnswer;
  list(): IssuedToken[];
  revoke(tokenId: string): { revoked: boolean };
}

/** A catalogue that vends project contexts. It is not itself a context. */
export interface Session {
  __describe(): SessionDescription;
  projects: ProjectCollection;
  /** Admin only: a bearer token acting as `principal` with exactly `projectIds`, ids or slugs (for `withItx`). Same as `tokens.issue`. */
  issueToken(input: { principal: string; projectIds: string[]; ttlSeconds?: number }): IssuedTokenAnswer;
  /** Admin only: issue, list and revoke bearer tokens one by one. */
  tokens: Tokens;
  /** Admin only: deployment-wide streams that belong to no project. Others get NOT_FOUND. */
  streams: StreamCollection;
  /** Admin only: deployment-wide repositories that belong to no project. Others get NOT_FOUND. */
  repos: Repos;
}

export interface StreamCollection {
  /** The stream at `path` ("/" or "/a/b"); it exists from its first append. */
  get(path: string): Stream;
}

/** One page of `Stream.readEvents`. */
export interface EventPage {
  events: StreamEvent[];
  /** Pass as `afterOffset` to read the next page. */
  nextAfterOffset: number;
  /** True when this page reached the head. */
  done: boolean;
}

/** An append-only event stream. */
export interface Stream {
  __describe(): Description & { path: string; head: number };
  head(): number;
  /** One commit for all events. Answers them as stored. */
  append(...events: EventInput[]): StreamEvent[];
  /**
   * The bulk writer's append: one commit answered with each input's offset and the new head.
   * `events` may be an array or, cheapest over the wire, one JSON string holding that array.
   * Fails with OFFSET_CONFLICT unless the head is still `expectedOffset` (when given).
   */
  appendBatch(input: { events: EventInput[] | string } & AppendOptions): AppendReceipt;
  getEvents(input?: GetEventsInput): StreamEvent[];
  readEvents(input?: { afterOffset?: number; limit?: number }): EventPage;
  /**
   * Up to 10,000 events (no type filter) as one packed JSON string, the fast path for bulk reads:
   * `{ streamPath, sources, times, rows: [[offset, type, payload, timeIndex, sourceIndex, idempotencyKey | null], ...] }`.
   * `unpackEvents` and `readEvents` from iterate/client turn it into events.
   */
  getEventsPacked(input?: Omit<GetEventsInput, "types">): string;
  waitForEvent(input: WaitForEventInput): StreamEvent;
  /** The durable event stored under an idempotency key, or null. */
  getByIdempotencyKey(key: string): StreamEvent | null;
  /** Replays durable events after `afterOffset`, then tails live (ephemeral events too). */
  subscribe(
    callback: (events: StreamEvent[]) => void | Promise<void>,
    options?: { key?: string; afterOffset?: number; types?: string[] },
  ): { key: string; afterOffset: number; head: number };
  unsubscribe(key: string): boolean;
}

/** The projects a session can reach. */
export interface ProjectCollection {
  list(): ProjectSummary[];
  /**
   * A handle on a project's root context by slug or id. Nothing is created: calls on a missing
   * (or forbidden: the two are indistinguishable) project fail with NOT_FOUND until `create()`.
   */
  get(slugOrId: string): ProjectRoot;
  /**
   * Creates a project (slug: lowercase kebab-case, 2-63 characters, unique) and answers its root
   * context once `project/created` landed; `waitUntilCreated: false` answers as soon as the
   * request is recorded (the root stream shows each step as it lands).
   */
  create(input: { slug: string; waitUntilCreated?: boolean }): Itx;
}

/** What `projects.get` answers: the root context plus `create()`. */
export interface ProjectRoot extends Itx {
  /** Creates the project, or finishes a creation that stopped part-way; `created` is false when it did not wait. */
  create(input?: { waitUntilCreated?: boolean }): { created: boolean };
}

// ---------------------------------------------------------------------------------------------
// Contexts
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Agents, secrets, dynamic workers, egress
// ---------------------------------------------------------------------------------------------

/** Which model an agent asks. The key is a secret's path, sent as a placeholder; never the key itself. */
export type LlmConfig =
  | { provider: "openai-compatible"; baseUrl: string; model: string; apiKey?: string }
  | { provider: "workers-ai"; model?: string };

export interface AgentConfig {
  llm?: LlmConfig;
  systemPrompt?: string;
}

/** `itx.agents`. */
export interface Agents {
  /** A handle on the agent at `path` (`/agents/<name>`); creates nothing. */
  get(path: string): Agent;
  list(): Array<{ path: string; createdAt: string }>;
}

/** One agent: a stream whose processor asks a model and runs the script each reply holds. */
export interface Agent {
  __describe(): Description & { path: string; whoami: string; agent: Record<string, unknown> };
  /** Get-or-create: the context, the processor subscription and `agent/created`. */
  create(input?: AgentConfig): { path: string; offset: number; created: boolean };
  configure(input: AgentConfig): { offset: number };
  /** A message into the agent's context; it answers in its own time. */
  message(text: string): { offset: number };
  /** A message, then the agent's next `chat.sendMessage` (text null when its loop ended without one). */
  ask(input: { message: string; timeoutMs?: number }): { text: string | null; offset: number };
  whoami(): { projectId: string; path: string; origin: string; principal: string };
  stream: Stream;
  chat: AgentChat;
  invokeCapability(input: { path: string[]; args: unknown[] }): unknown;
}

export interface AgentChat {
  /** Appends `agent/message-sent { text }`. */
  sendMessage(text: string): { offset: number };
}

/** `itx.secrets`. */
export interface Secrets {
  get(path: string): Secret;
}

/** One secret: material goes in and never comes out. */
export interface Secret {
  /** Stores material (encrypted) and the URLs it may be sent to. */
  update(input: { material: string; egress: { urls: string[] } }): { version: number };
  __describe(): Description & { path: string; placeholder: string; version: number | null };
}

/**
 * A schedule as `itx.scheduler.set` takes it: a key (unique in the context), exactly one of
 * `every` (whole seconds, at least 1) or `cron` (five or six fields, UTC), and a script
 * `async (itx) => { ... }` whose itx is the setter's handle on the context.
 */
export type ScheduleDefinition = { key: string; script: string } & ({ every: number; cron?: never } | { cron: string; every?: never });

/** One schedule as `list()` and `set()` answer it. Times are epoch milliseconds. */
export interface ScheduleSummary {
  key: string;
  every?: number;
  cron?: string;
  script: string;
  /** Offset of the `itx/schedule-set` event that defines the schedule as it stands. */
  definedAtOffset: number;
  /** Who set it: each occurrence runs with this principal and origin. */
  setBy: { principal: string; origin?: string };
  /** Occurrences run under this definition (fired or failed), and how many of them failed. */
  runCount: number;
  failedCount: number;
  /** The slot the last occurrence ran for, or null before the first. */
  lastScheduledFor: number | null;
  /** The next slot, or null when a cron expression has no more. */
  nextAt: number | null;
}

/**
 * `itx.scheduler`: each occurrence appends `itx/schedule-fired` or `itx/schedule-failed` (with a
 * code) to the context's stream. Missed slots coalesce into one occurrence; schedules survive restarts.
 */
export interface Scheduler {
  /** Defines or redefines a schedule. An unchanged definition keeps its clock, run count and defining event (`changed: false`). */
  set(input: ScheduleDefinition): ScheduleSummary & { changed: boolean };
  /** Cancels the schedule under `key`; answers whether there was one. */
  cancel(key: string): boolean;
  list(): ScheduleSummary[];
}

// ---------------------------------------------------------------------------------------------
// Repositories
// ---------------------------------------------------------------------------------------------

/** `itx.repos` (and the admin's `session.repos`). */
export interface Repos {
  /** Get-or-create: the repository at `path` (`/repos/<name>`), empty on branch `main` when new. */
  create(input: { path: string }): Repo;
  /** A handle on the repository at `path`; its calls answer NOT_FOUND until it is created. */
  get(path: string): Repo;
  /** Every repository of the project, oldest first. */
  list(): Array<{ path: string; createdAt: string }>;
}

/** A branch name (`main`), `refs/heads/<name>`, or a full 40-character commit id. Absent: the default branch. */
export type RepoRef = string;

/** Glob masks over file paths: `*` within a segment, `**` across segments, `?`, `{a,b}`. */
export interface RepoMasks {
  include?: string | string[];
  exclude?: string | string[];
}

/** `repo/commit-completed`'s payload, and what `commit()` answers. */
export interface RepoCommit {
  branch: string;
  commit: string;
  parents: string[];
  author: string;
  message: string;
  changedPaths: string[];
}

/** One commit in `log()`, newest first. */
export interface RepoLogEntry {
  commit: string;
  parents: string[];
  author: string;
  message: string;
  /** Seconds since the epoch. */
  timestamp: number;
}

/** One git repository: objects and refs durable in its Durable Object, facts on the stream at its path. */
export interface Repo {
  __describe(): Description & { path: string; defaultBranch: string; createdAt: string; branches: Array<{ name: string; head: string }>; sizeBytes: number };
  /**
   * Commits files onto `branch` (default `main`, created when missing): a string or bytes writes a
   * file, null deletes it. With `expectedHead` (null: the branch must not exist yet) it is a
   * compare-and-swap: a stale head is OFFSET_CONFLICT and nothing is written.
   */
  commit(input: { branch?: string; message: string; files: Record<string, string | Uint8Array | null>; expectedHead?: string | null }): RepoCommit;
  /** A file's text at a ref (bytes with `encoding: "binary"`); NOT_FOUND when absent. */
  readFile(input: { ref?: RepoRef; path: string; encoding?: "utf8" | "binary" }): string | Uint8Array;
  listFiles(input?: { ref?: RepoRef } & RepoMasks): string[];
  log(input?: { ref?: RepoRef; limit?: number }): RepoLogEntry[];
  branches(): Array<{ name: string; head: string }>;
  /** A new branch at `from` (default: the default branch's head); OFFSET_CONFLICT when it exists. */
  createBranch(input: { name: string; from?: RepoRef }): { name: string; head: string };
  deleteBranch(input: { name: string; expectedHead?: string }): { deleted: true };
  /** Inert file contents (text as strings, other files as bytes) of a branch's head now, or of a commit. */
  snapshot(at: { branch: string } | { commit: string }, masks?: RepoMasks): { commit: string; files: Record<string, string | Uint8Array> };
}

/** What `itx.workers.get` loads: a stateless worker, or a Durable Object class as a facet of this context. */
export type WorkerRef =
  | { source: WorkerSource; entrypoint?: string; props?: Record<string, unknown> }
  | { source: WorkerSource; durableObject: { className: string; key: string } };

/**
 * A worker's source: files given inline, or read from a repository of the project. A `branch` is
 * late-bound (each load reads its head then); a `commit` is pinned.
 */
export type WorkerSource =
  | { files: Record<string, string>; entryPoint?: string }
  | ({ repo: string; entryPoint?: string } & RepoMasks & ({ branch: string; commit?: never } | { commit: string; branch?: never }));

/** `itx.workers`. */
export interface Workers {
  /** A stub on the loaded worker's entrypoint (or the facet). */
  get(ref: WorkerRef): unknown;
}

/** `itx.egress`. */
export interface Egress {
  fetch(input: string | Request, init?: RequestInit): Response;
  /** A live replacement for this context's fetch until released; it sees placeholders, never material. */
  intercept(handler: (request: Request) => Response | Promise<Response>): { release(): boolean };
}

// ---------------------------------------------------------------------------------------------
// Remote protocols: MCP and OpenAPI clients (no mount, no events)
// ---------------------------------------------------------------------------------------------

/** `itx.mcp`. */
export interface Mcp {
  /**
   * Connects to the MCP server at `url` (streamable HTTP) and lists its tools. `headers` go with
   * every request; values may hold secret placeholders (`getSecret("/secrets/x")`).
   */
  connect(input: { url: string; headers?: Record<string, string> }): McpClient;
  /** A client on Exa's MCP server (the deployment's MCP_EXA_URL); it connects on first use. */
  exa: McpClient;
}

/** One tool of a remote MCP server. */
export interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  outputSchema?: unknown;
}

/** What a tool call answers; a tool that failed answers `isError: true`. */
export interface McpToolResult {
  content: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * A client on one remote MCP server. Every other property is a tool: `client.search({ query })`
 * is one `tools/call` (a dotted name: `client["a.b"](...)` or `invokeCapability`).
 */
export interface McpClient {
  __describe(): Description & { kind: "mcp-client"; url: string; server: { name: string; version: string } | null; tools: McpTool[] };
  /** The explicit form of `client.<tool>(arguments)`: the path's segments joined by "." name the tool. */
  invokeCapability(input: { path: string[]; args: unknown[] }): McpToolResult;
}

/** `itx.openapi`. */
export interface OpenApi {
  /**
   * Reads an OpenAPI 3 document from `url` (through egress, with `headers`) or as `spec` (an
   * object, JSON or YAML text). Calls go to `baseUrl`, else the document's first server.
   */
  connect(input: { url?: string; spec?: unknown; baseUrl?: string; headers?: Record<string, string> }): OpenApiClient;
}

/** One operation of an OpenAPI document, with its `$ref`s resolved. */
export interface OpenApiOperation {
  operationId: string;
  method: string;
  path: string;
  summary?: string;
  description?: string;
  parameters: Array<{ name: string; in: "path" | "query" | "header" | "cookie"; required: boolean; description?: string; schema?: unknown }>;
  requestBody?: { required: boolean; contentType: string; schema?: unknown };
}

/** What an operation call answers: any HTTP status is a result. */
export interface OpenApiResult {
  status: number;
  contentType: string | null;
  /** Parsed when the answer is JSON, else text; null when empty. */
  body: unknown;
}

/**
 * A client on one HTTP API. Every other property is an operation by operationId:
 * `api.getPet({ petId: 1, body? })`, parameters by name, the request body as `body`.
 */
export interface OpenApiClient {
  __describe(): Description & { kind: "openapi-client"; baseUrl: string; title: string | null; version: string | null; operations: OpenApiOperation[] };
  invokeCapability(input: { path: string[]; args: unknown[] }): OpenApiResult;
}

export interface ProjectSummary {
  id: string;
  slug: string;
}

// ---------------------------------------------------------------------------------------------
// Loaded code
// ---------------------------------------------------------------------------------------------

/**
 * `T` reached over Workers RPC: every method answers a promise that can be called through before
 * it settles (pipelining), and so does every property.
 */
export type Remote<T> = {
  readonly [K in keyof T]: T[K] extends (...args: infer A) => infer R
    ? (...args: A) => Pipelined<R>
    : T[K] extends object
      ? Remote<T[K]>
      : Pipelined<T[K]>;
};

/** What an RPC call answers: await it for the value, or call through it without waiting. Disposable. */
export type Pipelined<T> = Promise<Awaited<T>> & Disposable & (T extends object ? Remote<T> : unknown);

/**
 * What `this.getItx()` answers in code the platform loads: the itx of the context the code was
 * loaded for. Bind it with `using` in the smallest block that holds its calls; leaving the block
 * releases the scope and every handle awaited through it.
 */
export type ItxScope = Pipelined<Itx>;

/** `env.ITX` in code the platform loads: `get()` answers the isolate's itx. */
export interface ItxBinding {
  get(): ItxScope;
}

/** The env the platform gives code it loads (dynamic workers, source capabilities, their facets). */
export interface ItxEnv {
  ITX: ItxBinding;
}

// ---------------------------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------------------------

/**
 * Who wrote an event. The platform stamps `origin` (the context whose code or session wrote it),
 * `principal` and `platform`; a writer's own values are dropped except `processor`.
 */
export interface EventSource {
  /** The context path whose code or session appended the event, e.g. "/agents/a". */
  origin?: string;
  /** The authenticated principal id behind the write. */
  principal?: string;
  /** Set when the platform itself wrote the event (a domain Durable Object), naming which part. */
  platform?: string;
  /** The slug of the processor that appended it; the one field a writer may set. */
  processor?: string;
  /**
   * Set when code wrote the event in reaction to another event (a script an agent's turn ran, a
   * processor's answer): where the chain of reactions began and how many rounds it has run.
   */
  reaction?: Reaction;
}

/** A chain of reactions: code reacting to other code's output, round after round. */
export interface Reaction {
  /** The event that began the chain, as `<streamPath>#<offset>`. */
  began: string;
  /** 1 for code reacting to the first event, 2 for code reacting to that code's writes, ... */
  round: number;
}

/** An event as stored in (or, when ephemeral, passed through) a stream. */
export interface StreamEvent<Type extends string = string, Payload = unknown> {
  /** The stream's path inside its project, e.g. "/" or "/agents/a". */
  streamPath: string;
  /**
   * Position in the stream. Durable events are numbered 1, 2, 3, ... with no gaps. An ephemeral
   * event carries the offset of the durable event it follows (the head when it was sent).
   */
  offset: number;
  type: Type;
  payload: Payload;
  /** ISO-8601 time the stream committed it. */
  createdAt: string;
  source: EventSource;
  idempotencyKey?: string;
  /** Present and true for events that were never stored. */
  ephemeral?: true;
}

/** What a writer hands to `append`. Everything else is stamped by the stream. */
export interface EventInput<Type extends string = string, Payload = unknown> {
  type: Type;
  payload?: Payload;
  /** Same key and same body returns the stored event; a different body fails with IDEMPOTENCY_CONFLICT. */
  idempotencyKey?: string;
  /** Never stored: reaches only live subscribers connected at that moment. */
  ephemeral?: boolean;
  /** Only `processor` survives; the platform stamps the rest. */
  source?: EventSource;
}

export interface AppendOptions {
  /** Fails with OFFSET_CONFLICT unless the head is exactly this offset when the append commits. */
  expectedOffset?: number;
}

/** What `appendBatch` answers: each input's offset in order, and the head after the commit. */
export interface AppendReceipt {
  offsets: number[];
  head: number;
}

export interface GetEventsInput {
  /** Exclusive lower bound; 0 (the default) reads from the start. */
  afterOffset?: number;
  /** Exclusive upper bound. */
  beforeOffset?: number;
  /** Only these types. */
  types?: string[];
  /** At most this many events (1-500, default 100). */
  limit?: number;
}

export interface WaitForEventInput {
  type?: string;
  /** Any of these types (instead of `type`). */
  types?: string[];
  /** Every key given must equal the event payload's value at that key (deep equality). */
  payload?: Record<string, unknown>;
  /** Only events after this offset count; 0 (the default) includes the whole history. */
  afterOffset?: number;
  /** Fails with TIMEOUT after this long (at most 300,000). */
  timeoutMs: number;
}

// ---------------------------------------------------------------------------------------------
// Processors
// ---------------------------------------------------------------------------------------------

/** An event a processor did not fold because its payload failed the contract's schema. */
export interface SkippedEvent {
  offset: number;
  type: string;
  /** What was wrong, one line per problem, e.g. "name: Invalid input: expected string". */
  issues: string[];
}

/** Where a processor stands in its stream: what the engine's `snapshot(slug)` answers. */
export interface ProcessorSnapshot<State = unknown> {
  /** The last durable offset folded into `state`; 0 before the first. */
  offset: number;
  state: State;
  /** The contract version that reduced `state`. */
  version: string;
  /** How many events were skipped for failing their schema. */
  skipped: number;
}

/**
 * Work a processor started with `runInBackground`, recorded in the host's storage before the work
 * starts and deleted when it settles. A claim still there after its host died is revived.
 */
export interface BackgroundClaim {
  /** The processor that asked for the work. */
  slug: string;
  /** The processor's name for the work; one live run per key. */
  key: string;
  /** How many times the work was started under this claim. */
  attempts: number;
  /** Epoch milliseconds before which the work is not started again. */
  nextAttemptAt: number;
  /** waiting: to start at nextAttemptAt; running: started and not settled; given-up: died too often. */
  status: "waiting" | "running" | "given-up";
}

/** How a multi-step run ended. `refused` is an expected outcome; the others may be run again. */
export type RunStatus = "succeeded" | "refused" | "failed" | "unavailable";

/** The payload of a run's one terminal `<x>-settled` fact. */
export interface RunSettledPayload {
  /** The offset of the `<x>-requested` fact: the run's id. */
  requestOffset: number;
  status: RunStatus;
  error?: string;
}
