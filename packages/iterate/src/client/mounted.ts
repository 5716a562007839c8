import type { RpcPromise, RpcStub } from "capnweb";
import type { Itx, McpClient, OpenApiClient, ProjectRoot, ProjectWorker } from "../types.ts";
import type { Handle } from "./connect-itx.ts";

// What `mounted` accepts as a handle on T: a stub, a pipelined call answering T, or what awaiting
// one answers (capnweb types an awaited plain-interface result as a record of stubs).
type HandleOn<T extends object> = RpcStub<T> | Awaited<RpcPromise<T>>;

/**
 * Types what you know is mounted on a handle the platform's types cannot see into: capabilities
 * provided at run time on a context (from `projects.get`, `extend`, `cd`, `super`), a loaded
 * worker's methods (`workers.get`), the project worker's (`itx.worker`), an MCP server's tools or an
 * API's operations. The handle keeps its built-in members and gains `Mounted`'s. It answers the same
 * handle, unchanged: nothing is checked at run time, and the platform checks nothing against
 * `Mounted` (a wrong type fails as the call would, with the code the platform gives it).
 *
 * A handle from `connectItx` or `withItx` takes `Mounted` as their type parameter instead.
 * In JavaScript, annotate the variable (`@type {Handle<ProjectRoot & Greeter>}`): `Mounted` is
 * inferred from it.
 *
 * @example
 * const child = mounted<{ note(text: string): string }>(itx.extend({ name: "notes" }));
 * await child.note("hi");           // typed
 * await child.append({ type: "x" }); // the built-ins stay
 */
export function mounted<Mounted extends object>(handle: HandleOn<ProjectRoot>): Handle<ProjectRoot & Mounted>;
export function mounted<Mounted extends object>(handle: HandleOn<Itx>): Handle<Itx & Mounted>;
export function mounted<Mounted extends object>(handle: HandleOn<McpClient>): Handle<McpClient & Mounted>;
export function mounted<Mounted extends object>(handle: HandleOn<OpenApiClient>): Handle<OpenApiClient & Mounted>;
// Last of the named ones: an itx or a client is one too (the same two members).
export function mounted<Mounted extends object>(handle: HandleOn<ProjectWorker>): Handle<ProjectWorker & Mounted>;
/** Anything else a call answered (a loaded worker from `workers.get`): only `Mounted`'s members. */
export function mounted<Mounted extends object>(handle: HandleOn<object> | RpcPromise<unknown>): Handle<Mounted>;
export function mounted(handle: object): object {
  return handle;
}
