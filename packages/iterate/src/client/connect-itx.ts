import { newHttpBatchRpcSession, newWebSocketRpcSession, type RpcStub } from "capnweb";
import { ItxError } from "../errors/index.ts";
import type { Credentials, Session, UnauthenticatedRoot } from "../types.ts";

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
  agentPath: string;
}

/** A disposable Cap'n Web stub: `using` closes the connection it came from. */
export type Handle<T> = RpcStub<T & object> & Disposable;

/**
 * Connects to an OS and returns a handle. With no `auth` the handle is the unauthenticated root,
 * whose only method is `authenticate`; with `auth` it is the Session; with `projectId` the project's
 * root context; with `agentPath` that agent's context. Authentication and the narrowing calls are
 * pipelined: nothing waits for a round trip until you call something.
 *
 * @example
 * using session = connectItx({ baseUrl: "http://127.0.0.1:8787", auth: { type: "admin-secret", secret } });
 * console.log(await session.__describe());
 */
export function connectItx(options: ConnectAgentOptions): Handle<unknown>;
export function connectItx(options: ConnectProjectOptions): Handle<unknown>;
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
  if (options.agentPath !== undefined) handle = handle.agents.get(options.agentPath);
  return owningConnection(handle, root);
}

function openRoot(options: ConnectOptions): RpcStub<UnauthenticatedRoot> {
  const url = apiUrl(options.baseUrl);
  if (options.transport === "http-batch") return newHttpBatchRpcSession<UnauthenticatedRoot>(url.toString());
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return newWebSocketRpcSession<UnauthenticatedRoot>(url.toString());
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
function owningConnection(handle: object, root: Disposable): Handle<unknown> {
  const dispose = () => {
    try {
      (handle as Partial<Disposable>)[Symbol.dispose]?.();
    } finally {
      root[Symbol.dispose]();
    }
  };
  return new Proxy(handle, {
    get(target, property, receiver) {
      if (property === Symbol.dispose) return dispose;
      return Reflect.get(target, property, receiver);
    },
  }) as Handle<unknown>;
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
export function withItx(options: WithItxOptions): Handle<unknown> {
  const colon = options.context.indexOf(":");
  const project = colon === -1 ? options.context : options.context.slice(0, colon);
  const path = colon === -1 ? "/" : options.context.slice(colon + 1);
  if (project.length === 0) throw new ItxError("INVALID_ARGUMENT", `context must name a project, got ${JSON.stringify(options.context)}`);
  const root = openRoot(options);
  // oxlint-disable-next-line typescript/no-explicit-any -- capnweb's stub types do not model dynamic paths
  const itx = (root as any).authenticate({ type: "bearer", token: options.token }).projects.get(project);
  return owningConnection(path === "/" ? itx : itx.cd(path), root);
}
