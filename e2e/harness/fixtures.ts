import { test as base } from "vitest";
import {
  connectItx,
  type AgentContext,
  type ConnectAgentOptions,
  type ConnectOptions,
  type ConnectProjectOptions,
  type ConnectWithAuthOptions,
  type Handle,
} from "iterate/client";
import type { ProjectRoot, Session, UnauthenticatedRoot } from "iterate/types";
import { target } from "./os.ts";
import { newProject } from "./projects.ts";
import { startRestartableOs, type RestartableOs } from "./restartable-os.ts";

export type { RestartableOs } from "./restartable-os.ts";

/** `connectItx` against the OS under test: the same overloads, without `baseUrl`. */
export interface Connect {
  <Mounted extends object = {}>(options: Omit<ConnectAgentOptions, "baseUrl">): Handle<AgentContext & Mounted>;
  <Mounted extends object = {}>(options: Omit<ConnectProjectOptions, "baseUrl">): Handle<ProjectRoot & Mounted>;
  (options: Omit<ConnectWithAuthOptions, "baseUrl">): Handle<Session>;
  (options?: Omit<ConnectOptions, "baseUrl">): Handle<UnauthenticatedRoot>;
}

/**
 * The e2e suites' `test`, with typed fixtures in place of copied set-up. A test names the ones it
 * needs and gets each fresh (a project per test), and every handle they open is disposed after it:
 *
 * - `os`: the OS under test (`baseUrl`, `adminSecret`, `admin` credentials), once per file;
 * - `admin`: a Session authenticated with the admin secret;
 * - `project`: a new project (`projectId`, `slug`) and `itx`, an admin handle on its root context;
 * - `connect`: `connectItx` without `baseUrl`, for other credentials and contexts;
 * - `restartable`: an OS of the test's own that it may kill (SIGKILL) and start again on the same
 *   state (`RestartableOs`), stopped and its state removed after the test.
 *
 * @example
 * test("a project's root context answers whoami", async ({ project }) => {
 *   expect((await project.itx.whoami()).path).toBe("/");
 * });
 */
export const test = base
  .extend("os", { scope: "file" }, async () => target())
  .extend("connect", async ({ os }, { onCleanup }) => {
    const opened: Disposable[] = [];
    onCleanup(() => {
      for (const handle of opened) handle[Symbol.dispose]();
    });
    function connect<Mounted extends object = {}>(options: Omit<ConnectAgentOptions, "baseUrl">): Handle<AgentContext & Mounted>;
    function connect<Mounted extends object = {}>(options: Omit<ConnectProjectOptions, "baseUrl">): Handle<ProjectRoot & Mounted>;
    function connect(options: Omit<ConnectWithAuthOptions, "baseUrl">): Handle<Session>;
    function connect(options?: Omit<ConnectOptions, "baseUrl">): Handle<UnauthenticatedRoot>;
    function connect(options: Omit<ConnectOptions, "baseUrl"> = {}): Handle<unknown> {
      const handle = connectItx({ ...options, baseUrl: os.baseUrl });
      opened.push(handle);
      return handle;
    }
    return connect satisfies Connect;
  })
  .extend("admin", async ({ os, connect }) => connect({ auth: os.admin }))
  .extend("project", async ({ os, connect }) => {
    const { projectId, slug } = await newProject("e2e");
    return { projectId, slug, itx: connect({ auth: os.admin, projectId }) };
  })
  // It needs nothing of the shared OS, but vitest reads a fixture's needs from its first
  // parameter, which must be a destructuring pattern, and an empty one is a lint error.
  .extend("restartable", async ({ os: _shared }, { onCleanup }): Promise<RestartableOs> => {
    const restartable = await startRestartableOs();
    onCleanup(() => restartable.stop());
    return restartable;
  });


/** Types a handle with what a test knows is mounted on it (iterate/client's `mounted`). */
export { mounted } from "iterate/client";
