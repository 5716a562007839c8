import type { Itx, McpClient, OpenApiClient, ProjectRoot, ProjectWorker } from "../types.ts";
import type { Handle } from "./connect-itx.ts";

// What `mounted` accepts as a handle on T. A stub or a pipelined call is told by capnweb's brand,
// the member every stub type carries (`StubBase<T>`, which capnweb does not export). An awaited
// one is a record of stubs (capnweb types an awaited plain interface so), told by the kind its
// `__describe()` answers, plus the members only that kind has. Brands and kinds are cheap to
// compare; two stub types compared structurally cost the checker millions of instantiations.
type StubOf<T> = { readonly __RPC_STUB_BRAND: T };
type AwaitedOf<Kind extends string, Marker extends PropertyKey = never> = Disposable &
  Record<Marker, unknown> & { readonly __describe: StubOf<(...args: never[]) => { kind: Kind }> };

/**
 * Types what you know is mounted on a handle the platform's types cannot see into: capabilities
 * provided at run time on a context (from `projects.get`, `extend`, `cd`, `super`), a loaded
 * worker's methods (`workers.get`), the project worker's (`itx.worker`), an MCP server's tools or an
 * API's operations. The handle keeps its built-in members and gains `Mounted`'s. It answers the same
 * handle, unchanged: nothing is checked at run time, and the platform checks nothing against
 * `Mounted` (a wrong type fails as the call would, with the code the platform gives it).
 *
 * A handle from `connectItx` or `withItx` takes `Mounted` as their type parameter instead. Give
 * `Mounted` explicitly: inferring it from an annotated variable (the only way JavaScript has)
 * makes the checker compare two stub types structurally, which takes seconds (decision 0023).
 *
 * @example
 * const child = mounted<{ note(text: string): string }>(itx.extend({ name: "notes" }));
 * await child.note("hi");           // typed
 * await child.append({ type: "x" }); // the built-ins stay
 */
export function mounted<Mounted extends object>(handle: StubOf<ProjectRoot> | AwaitedOf<"itx", "create">): Handle<ProjectRoot & Mounted>;
export function mounted<Mounted extends object>(handle: StubOf<Itx> | AwaitedOf<"itx">): Handle<Itx & Mounted>;
export function mounted<Mounted extends object>(handle: StubOf<McpClient> | AwaitedOf<"mcp-client">): Handle<McpClient & Mounted>;
export function mounted<Mounted extends object>(handle: StubOf<OpenApiClient> | AwaitedOf<"openapi-client">): Handle<OpenApiClient & Mounted>;
// Last of the named ones: an itx or a client is one too (the same two members).
export function mounted<Mounted extends object>(handle: StubOf<ProjectWorker>): Handle<ProjectWorker & Mounted>;
/** Anything else a call answered (a loaded worker from `workers.get`): only `Mounted`'s members. */
export function mounted<Mounted extends object>(handle: object): Handle<Mounted>;
export function mounted(handle: object): object {
  return handle;
}
