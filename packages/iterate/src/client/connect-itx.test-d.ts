/**
 * Compile-time tests (`pnpm test:types`; nothing here runs): each way of connecting answers the
 * handle its options name, so a client sees exactly the members that exist there.
 */
import type { Itx, ProjectRoot, Session, UnauthenticatedRoot } from "../types.ts";
import { connectItx, withItx, type AgentContext, type Handle } from "./connect-itx.ts";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(_proof?: T): void {}

declare const baseUrl: string;
const auth = { type: "admin-secret", secret: "s" } as const;

// Declared, never called: the assertions are on the types of these expressions.
export function typeTests(): void {
  const root = connectItx({ baseUrl });
  expectType<Equal<typeof root, Handle<UnauthenticatedRoot>>>();
  // @ts-expect-error the unauthenticated root only authenticates
  void root.projects;

  const session = connectItx({ baseUrl, auth });
  expectType<Equal<typeof session, Handle<Session>>>();
  // @ts-expect-error a session is a catalogue, not a context
  void session.whoami;

  const project = connectItx({ baseUrl, auth, projectId: "prj_1" });
  expectType<Equal<typeof project, Handle<ProjectRoot>>>();
  expectType<Equal<Awaited<ReturnType<typeof project.create>>, { created: boolean } & Disposable>>();
  expectType<Equal<Awaited<ReturnType<typeof project.whoami>>, ReturnType<Itx["whoami"]> & Disposable>>();

  const agent = connectItx({ baseUrl, auth, projectId: "prj_1", agentPath: "/agents/helper" });
  expectType<Equal<typeof agent, Handle<AgentContext>>>();
  expectType<Equal<AgentContext, Itx>>();
  // @ts-expect-error an agent's context is not a project root: nothing to create
  void agent.create;
  void agent.chat.sendMessage;

  const token = withItx({ baseUrl, token: "t", context: "my-project:/agents/helper" });
  expectType<Equal<typeof token, Handle<Itx>>>();

  // Capabilities the caller knows are mounted type the dotted form.
  const tools = connectItx<{ tools: { add(a: number, b: number): number } }>({ baseUrl, auth, projectId: "prj_1" });
  expectType<Equal<Awaited<ReturnType<typeof tools.tools.add>>, number>>();
  // @ts-expect-error without `Mounted`, no capability path type-checks
  void project.tools;
}
