import { newHttpBatchRpcSession, RpcSession, type RpcStub } from "capnweb";
import { ItxError } from "../errors/index.ts";
import type { Credentials, Itx, ProjectRoot, Session, UnauthenticatedRoot } from "../types.ts";
import { ItxWebSocketTransport, requireWebSocket } from "./websocket-transport.ts";

/** How to reach a running OS. */
export interface ConnectOptions {
  /** The OS origin, for example `http://127.0.0.1:8787`. `/api` is appended. */
  baseUrl: string;
  /** `websocket` (default) keeps one connection open; `http-batch` sends each batch as one POST. */
  transport?: "websocket" | "http-batch";
}

export interface ConnectWithAuthOptions extends ConnectOptions {
  auth: Credentials;
}

export interface ConnectProjectOptions extends ConnectWithAuthOptions {
  projectId: string;
}

export interface ConnectAgentOptions extends ConnectProjectOptions {
  /** The agent's context path, `/agents/<name>`: the handle is that context, where `agent` and `chat` exist. */
  agentPath: string;
}

/**
 * An agent's own context (`/agents/<name>`): an itx where `agent` and `chat` answer. Unlike a
 * project root it has no `create()`.
 */
export type AgentContext = Itx;

/**
 * A disposable Cap'n Web stub: `using` closes the connection it came from. Awaiting it answers a
 * handle that closes the same connection when disposed.
 */
export type Handle<T> = RpcStub<T & object> & Disposable;

/**
 * Connects to an OS and returns a handle. With no `auth` the handle is the unauthenticated root,
 * whose only method is `authenticate`; with `auth` it is the Session; with `projectId` the project's
 * root context; with `agentPath` that agent's context (`handle.agent` is the agent, `handle.chat`
 * its voice). `Mounted` types the capabilities you know are provided on that context, so the
 * dotted form type-checks: `connectItx<{ tools: { add(a: number, b: number): number } }>(...)`
 * gives `itx.tools.add(1, 2)` (the platform checks nothing against it). Authentication and the narrowing calls are pipelined: nothing waits for a round trip
 * until you call something. `await connectItx(...)` waits for that round trip (failing with
 * UNAUTHENTICATED, or UNAVAILABLE naming the URL when no OS answers) and answers a handle that
 * still owns the connection: disposing either closes it.
 *
 * @example
 * using session = connectItx({ baseUrl: "http://127.0.0.1:8787", auth: { type: "admin-secret", secret } });
 * console.log(await session.__describe());
 */
export function connectItx<Mounted extends object = {}>(options: ConnectAgentOptions): Handle<AgentContext & Mounted>;
export function connectItx<Mounted extends object = {}>(options: ConnectProjectOptions): Handle<ProjectRoot & Mounted>;
export function connectItx(options: ConnectWithAuthOptions): Handle<Session>;
export function connectItx(options: ConnectOptions): Handle<UnauthenticatedRoot>;
export function connectItx(
  options: ConnectOptions & { auth?: Credentials; projectId?: string; agentPath?: string },
): Handle<unknown> {
  const root = openRoot(options);
  if (options.auth === undefined) return root as Handle<unknown>;
  // Each step is pipelined onto the previous one; the chain is one round trip when first used.
  // oxlint-disable-next-line typescript/no-explicit-any -- capnweb's stub types do not model dynamic paths
  const session = (root as any).authenticate(options.auth);
  let handle = session;
  if (options.projectId !== undefined) handle = session.projects.get(options.projectId);
  if (options.agentPath !== undefined) {
    if (options.projectId === undefined) throw new ItxError("INVALID_ARGUMENT", "agentPath needs projectId: agents live in a project");
    if (!/^\/agents\/[^/]/.test(options.agentPath)) {
      throw new ItxError("INVALID_ARGUMENT", `agentPath is an agent's context path like "/agents/helper", got ${JSON.stringify(options.agentPath)}`);
    }
    handle = handle.cd(options.agentPath);
  }
  return owningConnection(handle, root);
}

function openRoot(options: ConnectOptions): RpcStub<UnauthenticatedRoot> {
  const url = apiUrl(options.baseUrl);
  if (options.transport === "http-batch") return newHttpBatchRpcSession<UnauthenticatedRoot>(url.toString());
  requireWebSocket();
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const transport = new ItxWebSocketTransport(new WebSocket(url.toString()), options.baseUrl);
  return new RpcSession<UnauthenticatedRoot>(transport).getRemoteMain();
}

function apiUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch (cause) {
    throw new ItxError("INVALID_ARGUMENT", `baseUrl must be an absolute URL, got ${JSON.stringify(baseUrl)}`, { cause });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ItxError("INVALID_ARGUMENT", `baseUrl must use http: or https:, got ${url.protocol}`);
  }
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/api`;
  return url;
}

// Disposing the returned handle also disposes the root stub, which closes the connection.
// Everything else is forwarded to the capnweb stub unchanged, so pipelining keeps working.
// Awaiting the handle answers the settled stub wrapped the same way (and not thenable, or `await`
// would never end); when it rejects, nobody holds a handle to dispose, so the connection closes.
function owningConnection(handle: object, root: Disposable): Handle<unknown> {
  let closed = false;
  const close = (stub: object) => {
    try {
      (stub as Partial<Disposable>)[Symbol.dispose]?.();
    } finally {
      if (!closed) {
        closed = true;
        root[Symbol.dispose]();
      }
    }
  };
  const owning = (stub: object, thenable: boolean): Handle<unknown> =>
    new Proxy(stub, {
      get(target, property, receiver) {
        if (property === Symbol.dispose) return () => close(stub);
        if (property === "then") {
          const then = thenable ? (Reflect.get(target, property, receiver) as PromiseLike<unknown>["then"] | undefined) : undefined;
          if (typeof then !== "function") return undefined;
          return (onFulfilled?: (value: unknown) => unknown, onRejected?: (reason: unknown) => unknown) =>
            then
              .call(
                target as PromiseLike<unknown>,
                (value) => (isStub(value) ? owning(value, false) : value),
                (error: unknown) => {
                  close(stub);
                  throw error;
                },
              )
              .then(onFulfilled, onRejected);
        }
        return Reflect.get(target, property, receiver);
      },
    }) as Handle<unknown>;
  return owning(handle, true);
}

function isStub(value: unknown): value is object {
  return (typeof value === "object" && value !== null) || typeof value === "function";
}

export interface WithItxOptions extends ConnectOptions {
  /** A bearer token (from an admin's `session.issueToken`). */
  token: string;
  /** A project slug or id, optionally with a context path: `"my-project"` or `"my-project:/agents/a"`. */
  context: string;
}

/**
 * A handle on one context, authenticated with a bearer token. Pipelined like `connectItx`;
 * disposing it closes the connection.
 *
 * @example
 * using itx = withItx({ baseUrl, token, context: "my-project" });
 * await itx.provideCapability({ name: "runSwiftOnMyMac", capability: async (src) => runSwift(src) });
 */
export function withItx<Mounted extends object = {}>(options: WithItxOptions): Handle<Itx & Mounted> {
  const colon = options.context.indexOf(":");
  const project = colon === -1 ? options.context : options.context.slice(0, colon);
  const path = colon === -1 ? "/" : options.context.slice(colon + 1);
  if (project.length === 0) throw new ItxError("INVALID_ARGUMENT", `context must name a project, got ${JSON.stringify(options.context)}`);
  const root = openRoot(options);
  // oxlint-disable-next-line typescript/no-explicit-any -- capnweb's stub types do not model dynamic paths
  const itx = (root as any).authenticate({ type: "bearer", token: options.token }).projects.get(project);
  return owningConnection(path === "/" ? itx : itx.cd(path), root) as Handle<Itx & Mounted>;
}
