// Node-only: starts and stops a local OS (wrangler dev on workerd). Used by `pnpm dev`, the e2e
// harness and the benchmarks, so all three run the OS exactly the same way.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The admin secret `pnpm dev` uses when ITERATE_ADMIN_SECRET is unset. Local use only. */
export const LOCAL_ADMIN_SECRET = "iterate-local-admin-secret";

/**
 * The key secret material is encrypted under when ITERATE_SECRETS_KEY is unset. Only this local
 * runner ever uses it (and says so when it starts): the Worker itself has no default, so a
 * deployment without the key refuses secret operations with UNAVAILABLE.
 */
export const LOCAL_SECRETS_KEY = "iterate-local-secrets-key";

export interface LocalOsOptions {
  /** Port to listen on; a free one when omitted. */
  port?: number;
  /** Folder for Durable Object SQLite and other state; a fresh temporary folder when omitted. */
  persistTo?: string;
  adminSecret?: string;
  /**
   * Extra `--var NAME:value` pairs. EGRESS_ALLOW_PRIVATE_ADDRESSES defaults to "loopback";
   * ITERATE_SECRETS_KEY to the environment's, else LOCAL_SECRETS_KEY.
   */
  vars?: Record<string, string>;
  /** Forward wrangler's output to this process's stdout/stderr. */
  inheritOutput?: boolean;
  /** How long to wait for the first answer. */
  readyTimeoutMs?: number;
}

export interface LocalOs {
  baseUrl: string;
  adminSecret: string;
  persistTo: string;
  /** Everything wrangler and workerd printed (when output is not inherited). */
  logPath: string;
  process: ChildProcess;
  /** Stops wrangler and workerd; removes the state folder when it was temporary. */
  stop(): Promise<void>;
}

const OS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export const QUIET_WRANGLER_ENV = {
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_SEND_ERROR_REPORTS: "false",
  DO_NOT_TRACK: "1",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  // wrangler's local trace collector (on by default) tails every invocation, each Durable Object
  // call and loopback entrypoint included, into a SQLite store on workerd's one thread, with an
  // fsync per batch: it roughly doubles the cost of a hop. The deployment has observability off
  // (wrangler.jsonc), so local runs match it; X_LOCAL_OBSERVABILITY=true turns it back on.
  X_LOCAL_OBSERVABILITY: process.env.X_LOCAL_OBSERVABILITY ?? "false",
};

export async function startLocalOs(options: LocalOsOptions = {}): Promise<LocalOs> {
  const port = options.port ?? (await freePort());
  const inspectorPort = await freePort();
  const temporaryState = options.persistTo === undefined;
  const persistTo = options.persistTo ?? mkdtempSync(join(tmpdir(), "iterate-os-"));
  const adminSecret = options.adminSecret ?? LOCAL_ADMIN_SECRET;
  // Egress reaches this machine's own servers (loopback) and no other private address, unless the
  // caller says otherwise: what local development and the tests need, and nothing more.
  const keyFromEnv = process.env.ITERATE_SECRETS_KEY;
  const secretsKey = options.vars?.ITERATE_SECRETS_KEY ?? (keyFromEnv !== undefined && keyFromEnv !== "" ? keyFromEnv : LOCAL_SECRETS_KEY);
  const vars = {
    ITERATE_ADMIN_SECRET: adminSecret,
    EGRESS_ALLOW_PRIVATE_ADDRESSES: "loopback",
    ITERATE_SECRETS_KEY: secretsKey,
    ...options.vars,
  };
  const wranglerBin = join(dirname(createRequire(join(OS_DIR, "package.json")).resolve("wrangler")), "..", "bin", "wrangler.js");
  const args = [
    wranglerBin,
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    persistTo,
    "--show-interactive-dev-session=false",
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ];
  const child = spawn(process.execPath, args, {
    cwd: OS_DIR,
    env: { ...process.env, ...QUIET_WRANGLER_ENV },
    stdio: options.inheritOutput ? "inherit" : ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  const logPath = join(mkdtempSync(join(tmpdir(), "iterate-os-log-")), "os.log");
  const log = createWriteStream(logPath);
  const record = (chunk: Buffer) => {
    log.write(chunk);
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on("data", record);
  child.stderr?.on("data", record);
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await killGroup(child);
    log.end();
    if (temporaryState) rmSync(persistTo, { recursive: true, force: true });
  };
  try {
    await waitUntilReady(baseUrl, child, options.readyTimeoutMs ?? 60_000);
  } catch (error) {
    await stop();
    throw new Error(`local OS did not start: ${(error as Error).message}\n--- wrangler output ---\n${output}`, { cause: error });
  }
  if (secretsKey === LOCAL_SECRETS_KEY) {
    console.log(`local OS at ${baseUrl}: ITERATE_SECRETS_KEY is unset, so secrets are encrypted under the local default key (local use only, never a deployment)`);
  }
  return { baseUrl, adminSecret, persistTo, logPath, process: child, stop };
}

async function waitUntilReady(baseUrl: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler exited with code ${child.exitCode}`);
    try {
      const response = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 150));
  }
  throw new Error(`no answer from ${baseUrl}/health within ${timeoutMs} ms`);
}

async function killGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }, 5_000);
  await exited;
  clearTimeout(timer);
}

/** Asks the kernel for a port nobody listens on. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => done(port));
    });
  });
}
