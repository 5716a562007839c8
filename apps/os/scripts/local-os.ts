// Node-only: starts and stops a local OS (wrangler dev on workerd) and its runner (untrusted code
// in a second workerd process, watched by runner-watchdog.ts). Used by `pnpm dev`, the e2e harness
// and the benchmarks, so all three run the OS exactly the same way.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startRunnerWatchdog, type RunnerWatchdog } from "./runner-watchdog.ts";
import { freePort } from "./free-port.ts";
import { findWorkerdSocket, answersAsOs } from "./workerd-socket.ts";
import { formatWorkerSocket, WORKER_SOCKET_ENV } from "./worker-socket.ts";
import { ensureDashboardBuilt } from "./dashboard-build.ts";
import { BENCH_MAIN, withBench } from "./bench-config.ts";
import { LOCAL_ADMIN_SECRET } from "../src/auth/public-secret-guard.ts";

export { freePort };

/** The admin secret `pnpm dev` uses when ITERATE_ADMIN_SECRET is unset. Local use only: the OS then answers only this machine's own clients (src/auth/public-secret-guard.ts). */
export { LOCAL_ADMIN_SECRET };

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
  /**
   * Run untrusted code in the OS's own process, as the workerd tests do (default false: in the
   * runner). Only for measuring what the runner costs; the OS is then as exposed as before.
   */
  inProcessLoader?: boolean;
  /**
   * Run the bench worker (scripts/bench-config.ts): the OS plus the unauthenticated benchmark
   * root at /api/bench and its Durable Object. Only `pnpm bench` sets it.
   */
  bench?: boolean;
}

export interface LocalOs {
  baseUrl: string;
  adminSecret: string;
  persistTo: string;
  /** Everything wrangler and workerd printed (when output is not inherited). */
  logPath: string;
  process: ChildProcess;
  /** The runner's watchdog (absent with `inProcessLoader`). */
  runner?: RunnerWatchdog;
  /**
   * With `bench`: the OS at its own workerd socket, without wrangler dev's proxy in front
   * (scripts/workerd-socket.ts, decision 0025); absent when it could not be found.
   */
  workerdUrl?: string;
  /**
   * With `bench`: a socket serving the OS Worker itself, with neither wrangler's proxy nor
   * Miniflare's entry worker and assets router in front (scripts/worker-socket.ts, decision 0027);
   * absent when it did not answer as the OS.
   */
  workerUrl?: string;
  /** Stops wrangler and workerd; removes the state folder when it was temporary. */
  stop(): Promise<void>;
}

const OS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const TETHERED = join(dirname(fileURLToPath(import.meta.url)), "tethered.ts");
const WORKER_SOCKET_PRELOAD = join(dirname(fileURLToPath(import.meta.url)), "worker-socket-preload.ts");

/** The runner's service name; each local OS has a dev registry of its own, so it never clashes. */
export const RUNNER_SERVICE = "iterate-runner";
/** The OS Worker's name (wrangler.jsonc), which the runner calls back. */
const OS_SERVICE = "iterate-os";

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
  // wrangler's local explorer (on by default) answers /cdn-cgi/local/explorer/api on the OS's own
  // port with no credential: it lists every Durable Object and runs any SQL in it. A script's
  // egress may reach loopback here, so it could read and rewrite every project's streams and
  // secrets. Always off, whatever the environment says.
  X_LOCAL_EXPLORER: "false",
};

/** How many times a local OS whose ports were chosen here is started again when one was taken first. */
const PORT_RACE_ATTEMPTS = 3;

/**
 * Starts a local OS and answers once it is ready. Ports the caller did not name are asked of the
 * kernel just before wrangler binds them, and another process (a parallel e2e suite starting its
 * own OS) can take one in between: then wrangler exits with "Address already in use", and the OS
 * is started again on new ports. A port the caller named is never replaced.
 */
export async function startLocalOs(options: LocalOsOptions = {}): Promise<LocalOs> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startLocalOsOnce(options);
    } catch (error) {
      const lostPortRace = options.port === undefined && /Address already in use/.test(error instanceof Error ? error.message : String(error));
      if (!lostPortRace || attempt >= PORT_RACE_ATTEMPTS) throw error;
    }
  }
}

async function startLocalOsOnce(options: LocalOsOptions): Promise<LocalOs> {
  // A port someone else listens on would answer our readiness probe with their OS: refuse it
  // before starting anything, rather than report success and fail later.
  if (options.port !== undefined) await assertPortFree(options.port);
  // The dashboard is static assets the Worker serves: build them first if they are stale.
  ensureDashboardBuilt({ log: (line) => console.log(line) });
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
    ITERATE_SESSION_KEY: process.env.ITERATE_SESSION_KEY || localSessionKey(persistTo),
    EGRESS_ALLOW_PRIVATE_ADDRESSES: "loopback",
    ITERATE_SECRETS_KEY: secretsKey,
    ...options.vars,
  };
  const wranglerBin = join(dirname(createRequire(join(OS_DIR, "package.json")).resolve("wrangler")), "..", "bin", "wrangler.js");
  let output = "";
  const logPath = join(mkdtempSync(join(tmpdir(), "iterate-os-log-")), "os.log");
  const log = createWriteStream(logPath);
  const record = (chunk: Buffer | string) => {
    log.write(chunk);
    output = (output + chunk.toString()).slice(-20_000);
  };
  // The runner and the OS find each other in a dev registry of this OS's own.
  const runDir = mkdtempSync(join(tmpdir(), "iterate-os-run-"));
  const registry = join(runDir, "registry");
  mkdirSync(registry);
  // The runner starts beside wrangler (each takes seconds); the OS is ready when both are.
  const runnerStarting: Promise<RunnerWatchdog | undefined> = options.inProcessLoader
    ? Promise.resolve(undefined)
    : startRunnerWatchdog({
        registry,
        service: RUNNER_SERVICE,
        osService: OS_SERVICE,
        persistTo: join(persistTo, "runner"),
        egressPolicy: vars.EGRESS_ALLOW_PRIVATE_ADDRESSES,
        log: (line) => (options.inheritOutput ? console.log(line) : record(`${line}\n`)),
      });
  runnerStarting.catch(() => undefined);
  let runner: RunnerWatchdog | undefined;
  const configPath = join(runDir, "wrangler.json");
  writeFileSync(configPath, JSON.stringify(localConfig(!options.inProcessLoader, options.bench ?? false), null, 2));
  // The bundler Worker runs in the same workerd as the OS (wrangler's multi-config dev), reached
  // through the OS's BUNDLER service binding as in a deployment. `--var` reaches only the first
  // config's Worker: the bundler gets no secret.
  const bundlerConfigPath = join(runDir, "wrangler.bundler.json");
  writeFileSync(bundlerConfigPath, JSON.stringify(copiedConfig("wrangler.bundler.jsonc"), null, 2));
  // The bench's wrangler dev also opens a socket onto the OS Worker itself (decision 0027).
  const workerSocket = options.bench ? { worker: OS_SERVICE, host: "127.0.0.1", port: await freePort() } : undefined;
  const args = [
    ...(workerSocket ? ["--import", WORKER_SOCKET_PRELOAD] : []),
    wranglerBin,
    "dev",
    "--config",
    configPath,
    "--config",
    bundlerConfigPath,
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
  // Through the tether: if this process dies without calling stop(), the OS stops with it.
  const child = spawn(process.execPath, [TETHERED, process.execPath, ...args], {
    cwd: OS_DIR,
    env: {
      ...process.env,
      ...QUIET_WRANGLER_ENV,
      WRANGLER_REGISTRY_PATH: registry,
      ...(workerSocket ? { [WORKER_SOCKET_ENV]: formatWorkerSocket(workerSocket) } : {}),
    },
    stdio: options.inheritOutput ? "inherit" : ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout?.on("data", record);
  child.stderr?.on("data", record);
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await killGroup(child);
    await runner?.stop();
    log.end();
    rmSync(runDir, { recursive: true, force: true });
    if (temporaryState) rmSync(persistTo, { recursive: true, force: true });
  };
  try {
    [runner] = await Promise.all([runnerStarting, waitUntilReady(baseUrl, child, options.readyTimeoutMs ?? 120_000)]);
  } catch (error) {
    runner = await runnerStarting.catch(() => undefined);
    await stop();
    throw new Error(`local OS did not start: ${(error as Error).message}\n--- wrangler output ---\n${output}`, { cause: error });
  }
  if (secretsKey === LOCAL_SECRETS_KEY) {
    console.log(`local OS at ${baseUrl}: ITERATE_SECRETS_KEY is unset, so secrets are encrypted under the local default key (local use only, never a deployment)`);
  }
  // Miniflare's entry socket, not the direct one, which is on the same workerd.
  const workerdUrl = options.bench && child.pid !== undefined ? await findWorkerdSocket(child.pid, port, "workerd", workerSocket ? [workerSocket.port] : []) : undefined;
  const workerUrl = workerSocket && (await answersAsOs(workerSocket.port)) ? `http://${workerSocket.host}:${workerSocket.port}` : undefined;
  return {
    baseUrl,
    adminSecret,
    persistTo,
    logPath,
    process: child,
    ...(runner ? { runner } : {}),
    ...(workerdUrl ? { workerdUrl } : {}),
    ...(workerUrl ? { workerUrl } : {}),
    stop,
  };
}

/**
 * The key browser session cookies are signed with locally: random, made once per state folder
 * (so `pnpm dev` keeps you signed in across restarts) and readable only by you. There is no
 * shared default: a cookie from one local OS never verifies on another.
 */
function localSessionKey(persistTo: string): string {
  const path = join(persistTo, "session-key");
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    mkdirSync(persistTo, { recursive: true });
    const key = randomBytes(32).toString("base64url");
    writeFileSync(path, key, { mode: 0o600 });
    return key;
  }
}

/**
 * The OS's wrangler.jsonc as the local OS runs it: with `RUNNER`, the service binding to the
 * runner's entrypoint, beside the configured ones (BUNDLER). The deployment has no such binding
 * and loads untrusted code in its own Loader, where Cloudflare enforces the limits. With `bench`,
 * the bench worker's configuration.
 */
function localConfig(withRunner: boolean, bench: boolean): Record<string, unknown> {
  const copied = copiedConfig("wrangler.jsonc");
  const config = bench ? { ...withBench(copied), main: join(OS_DIR, BENCH_MAIN) } : copied;
  const configured = (config.services as unknown[] | undefined) ?? [];
  const services = withRunner ? [...configured, { binding: "RUNNER", service: RUNNER_SERVICE, entrypoint: "RunnerEntrypoint" }] : configured;
  return { ...config, services };
}

/** A wrangler config of apps/os, made usable from another folder (its paths absolute). */
function copiedConfig(file: string): Record<string, unknown> {
  // The configs' comments are whole lines (`//`); nothing else in them needs JSONC.
  const text = readFileSync(join(OS_DIR, file), "utf8")
    .split("\n")
    .filter((line) => !line.trim().startsWith("//"))
    .join("\n");
  const { $schema: _schema, main, ...config } = JSON.parse(text) as Record<string, unknown>;
  // Paths in the config are relative to its file; this copy lives elsewhere.
  const assets = config.assets as { directory: string } | undefined;
  const absoluteAssets = assets ? { assets: { ...assets, directory: resolve(OS_DIR, assets.directory) } } : {};
  return { ...config, ...absoluteAssets, main: join(OS_DIR, String(main)) };
}

/** Fails, naming the port and what to do, when something already listens on 127.0.0.1:`port`. */
export async function assertPortFree(port: number): Promise<void> {
  const server = createServer();
  try {
    await new Promise<void>((listening, fail) => {
      server.once("error", fail);
      server.listen(port, "127.0.0.1", listening);
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      throw new Error(`port ${port} is already in use on 127.0.0.1 (another \`pnpm dev\`?): stop it, or choose another port with --port`, { cause: error });
    }
    throw error;
  } finally {
    await new Promise((closed) => server.close(closed));
  }
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
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
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

