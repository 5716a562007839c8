import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectItx, type Handle } from "iterate/client";
import type { ProjectRoot, Session } from "iterate/types";
import { startLocalOs, type LocalOs } from "@iterate/os/local-os";
import { readyTimeoutMs } from "./ready-timeout.ts";

/**
 * How long a restartable OS may take to answer when `E2E_READY_TIMEOUT_MS` is unset. Longer than
 * the shared OS's: it starts (and starts again) while the shared OS and its runner already load the machine.
 */
export const RESTARTABLE_READY_TIMEOUT_MS = 300_000;

/**
 * A local OS of one test's own, on a state folder of its own, that the test kills (SIGKILL: no
 * graceful shutdown, as a crash or an evicted machine) and starts again on the same state. The
 * shared OS the other suites use must never restart under them, so a restart test takes this one.
 *
 * Handles come from `session()` and `project()` and belong to the OS as it runs when they are
 * opened: `kill()` closes them, and a test opens new ones after `start()`.
 *
 * @example
 * test("a fact survives a restart", async ({ restartable }) => {
 *   const { projectId } = await restartable.session().projects.create({ slug: "survivor" }).whoami();
 *   await restartable.killAndRestart();
 *   expect((await restartable.project(projectId).whoami()).path).toBe("/");
 * });
 */
export interface RestartableOs {
  /** A Session authenticated with the admin secret, on the OS as it runs now. */
  session(): Handle<Session>;
  /** An admin handle on `projectId`'s root context, on the OS as it runs now. */
  project(projectId: string): Handle<ProjectRoot>;
  /** Kills the OS's whole process group at once (SIGKILL) and closes the handles opened on it. */
  kill(): Promise<void>;
  /** Starts the killed OS again on the same state folder; resolves once it answers. */
  start(): Promise<void>;
  /** Kills the OS's runner process (SIGKILL) and resolves once its watchdog has started the next one; the OS keeps running. */
  crashRunner(): Promise<void>;
  /** Has the OS's runner drained and replaced, as one past RUNNER_RSS_RECYCLE_MB is; resolves once the next one is up. */
  recycleRunner(): Promise<void>;
  /** `kill()`, then `start()` at once. */
  killAndRestart(): Promise<void>;
  /** Stops the OS for good and removes its state folder (the `restartable` fixture does it after the test). */
  stop(): Promise<void>;
}

/** Starts a restartable OS on a fresh temporary state folder; resolves once it answers. */
export async function startRestartableOs(): Promise<RestartableOs> {
  const persistTo = mkdtempSync(join(tmpdir(), "iterate-restartable-"));
  const boot = () => startLocalOs({ persistTo, readyTimeoutMs: readyTimeoutMs(RESTARTABLE_READY_TIMEOUT_MS) });
  let os: LocalOs | undefined;
  try {
    os = await boot();
  } catch (error) {
    rmSync(persistTo, { recursive: true, force: true });
    throw error;
  }
  let handles: Disposable[] = [];
  const close = () => {
    for (const handle of handles) handle[Symbol.dispose]();
    handles = [];
  };
  const running = (): LocalOs => os ?? failWith("the restartable OS is killed: start() it first");
  const open = <H extends Disposable>(handle: H): H => {
    handles.push(handle);
    return handle;
  };
  const admin = () => ({ type: "admin-secret", secret: running().adminSecret }) as const;

  const kill = async () => {
    const dying = running();
    os = undefined;
    if (dying.process.pid !== undefined) process.kill(-dying.process.pid, "SIGKILL");
    close();
    // Reaps what is left (the runner, the run folder); the state folder stays for the restart.
    await dying.stop();
  };
  const start = async () => {
    if (os !== undefined) failWith("the restartable OS is running: kill() it first");
    os = await boot();
  };
  return {
    session: () => open(connectItx({ baseUrl: running().baseUrl, auth: admin() })),
    project: (projectId) => open(connectItx({ baseUrl: running().baseUrl, auth: admin(), projectId })),
    kill,
    start,
    async crashRunner() {
      const runner = running().runner ?? failWith("this OS runs untrusted code in its own Loader: it has no runner");
      await runner.crash();
    },
    async recycleRunner() {
      const runner = running().runner ?? failWith("this OS runs untrusted code in its own Loader: it has no runner");
      await runner.recycle();
    },
    async killAndRestart() {
      await kill();
      await start();
    },
    async stop() {
      close();
      await os?.stop();
      os = undefined;
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
}

function failWith(message: string): never {
  throw new Error(message);
}
