/**
 * Compile-time tests (`pnpm test:types`; nothing here runs): `mounted<M>(handle)` adds what the
 * caller knows is mounted to the handle's own members, for every kind of handle whose members the
 * contract cannot list, and capnweb's stub types cannot do it for us (decision 0023).
 */
import type { RpcStub } from "capnweb";
import type { Itx, McpClient, McpToolResult, OpenApiClient, ProjectRoot, ProjectWorker, Session } from "../types.ts";
import type { Handle } from "./connect-itx.ts";
import { mounted } from "./mounted.ts";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(_proof?: T): void {}

// Named, not written inline: two inline object types are distinct to the checker, and comparing
// stubs of distinct types structurally costs it millions of instantiations.
interface Greeter {
  greet(name: string): string;
}
interface Notes {
  note(text: string): string;
}
interface Hello {
  hello(): string;
}
interface ExaTools {
  web_search_exa(input: { query: string }): McpToolResult;
}
interface PetOperations {
  getPet(input: { petId: number }): unknown;
}

declare const session: Handle<Session>;
declare const itx: Handle<Itx>;

// Declared, never called: the assertions are on the types of these expressions.
export async function typeTests(): Promise<void> {
  // A project from the session keeps create() and gains the mount.
  const project = mounted<Greeter>(session.projects.get("hello-world"));
  expectType<Equal<typeof project, Handle<ProjectRoot & Greeter>>>();
  expectType<Equal<Awaited<ReturnType<typeof project.greet>>, string>>();
  expectType<Equal<Awaited<ReturnType<typeof project.create>>, { created: boolean } & Disposable>>();
  // @ts-expect-error a typo is not a capability: only what Mounted names type-checks
  void project.gret;
  // @ts-expect-error the mount's parameters are checked
  void project.greet(1);

  // Contexts reached from a context: pipelined, awaited, or from cd() and super.
  const child = mounted<Greeter>(itx.extend({ name: "notes" }));
  expectType<Equal<typeof child, Handle<Itx & Greeter>>>();
  expectType<Equal<Awaited<ReturnType<typeof child.greet>>, string>>();
  const awaited = mounted<Greeter>(await itx.extend({ name: "notes" }));
  expectType<Equal<typeof awaited, Handle<Itx & Greeter>>>();
  const inbox = mounted<Greeter>(itx.cd("/inbox"));
  expectType<Equal<typeof inbox, Handle<Itx & Greeter>>>();
  const parent = mounted<Greeter>(itx.super);
  expectType<Equal<typeof parent, Handle<Itx & Greeter>>>();

  // A loaded worker is nothing but its own methods.
  const worker = mounted<Notes>(itx.workers.get({ source: { files: {} } }));
  expectType<Equal<Awaited<ReturnType<typeof worker.note>>, string>>();
  // @ts-expect-error a loaded worker has no itx members
  void worker.append;

  // The project worker, an MCP server's tools and an API's operations keep their own members.
  const projectWorker = mounted<Hello>(itx.worker);
  expectType<Equal<typeof projectWorker, Handle<ProjectWorker & Hello>>>();
  const exa = mounted<ExaTools>(itx.mcp.exa);
  expectType<Equal<typeof exa, Handle<McpClient & ExaTools>>>();
  const exaAwaited = mounted<ExaTools>(await itx.mcp.connect({ url: "https://mcp.example/mcp" }));
  expectType<Equal<typeof exaAwaited, Handle<McpClient & ExaTools>>>();
  const pets = mounted<PetOperations>(itx.openapi.connect({ url: "https://api.example.com/openapi.json" }));
  expectType<Equal<typeof pets, Handle<OpenApiClient & PetOperations>>>();
  const petsAwaited = mounted<PetOperations>(await itx.openapi.connect({ url: "https://api.example.com/openapi.json" }));
  expectType<Equal<typeof petsAwaited, Handle<OpenApiClient & PetOperations>>>();
}

// Why a helper and not the contract: capnweb's stub types map each method through an `infer`,
// which drops a method's own type parameters, so `extend<Mounted>()` on the contract would not
// survive the stub (decision 0023).
interface GenericExtend {
  extend<Mounted extends object = {}>(input: { name: string }): Itx & Mounted;
}
export function genericMethodsDoNotSurviveStubs(stub: RpcStub<GenericExtend>): void {
  // @ts-expect-error Expected 0 type arguments: the stub's extend is no longer generic
  void stub.extend<Greeter>({ name: "n" });
}
