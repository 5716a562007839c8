// Node-only: starts the local runner (runner-process.ts) and keeps it alive. workerd enforces no
// CPU or memory limit on Loader isolates locally, so untrusted code runs in this separate process.
// When the runner does not answer /health within RUNNER_HANG_MS (code that never yields, or V8
// stopped at its heap limit), answers it with a failure (it drained after a missed deadline),
// holds more than RUNNER_RSS_MAX_MB, or exits, the watchdog kills its process group, drops its
// dev-registry entry and starts a new one. Past RUNNER_RSS_RECYCLE_MB it first asks the runner to
// drain once idle (POST /drain with a secret of this start's own), so a runner that grew is
// replaced between calls rather than in the middle of one. The OS's calls in flight fail at once and are settled
// with a code; new calls wait for the new runner (RUNNER_WAIT_MS).
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { UNTRUSTED_LIMITS } from "../src/worker-loader/untrusted-limits.ts";
import { freePort } from "./free-port.ts";

const RUNNER_PROCESS = join(dirname(fileURLToPath(import.meta.url)), "runner-process.ts");

export interface RunnerWatchdogOptions {
  /** The dev registry the OS's `wrangler dev` reads (WRANGLER_REGISTRY_PATH). */
  registry: string;
  /** The runner's service name, which the OS's RUNNER binding names. */
  service: string;
  /** The OS Worker's name, which the runner's OS binding names. */
  osService: string;
  /** The folder the runner keeps its facets' SQLite in (it survives the runner's replacement). */
  persistTo: string;
  /** The OS's EGRESS_ALLOW_PRIVATE_ADDRESSES: the runner's direct egress and network filter enforce it too. */
  egressPolicy?: string;
  /** Where the runner's output and the watchdog's own lines go. */
  log(line: string): void;
  /** How long to wait for a (re)started runner's first answer. */
  readyTimeoutMs?: number;
  /** The resident-memory cap (default UNTRUSTED_LIMITS.RUNNER_RSS_MAX_MB); tests lower it. */
  rssMaxMb?: number;
  /** Past this much resident memory the runner drains and is replaced (default UNTRUSTED_LIMITS.RUNNER_RSS_RECYCLE_MB); tests lower it. */
  rssRecycleMb?: number;
}

export interface RunnerWatchdog {
  /** How many times the runner was replaced since the first start. */
  readonly restarts: number;
  /**
   * Kills the runner's process group at once (SIGKILL), as a crash would, while the OS may hold
   * sessions into it; resolves once the watchdog has replaced it with a healthy one (tests).
   */
  crash(): Promise<void>;
  /**
   * Asks the runner to drain once no call is in flight, as a runner past RUNNER_RSS_RECYCLE_MB is
   * asked, and resolves once the watchdog has replaced it with a healthy one (tests).
   */
  recycle(): Promise<void>;
  /** Stops the runner and the watchdog. */
  stop(): Promise<void>;
}

/** Starts the runner and answers once it is healthy; from then on it is watched. */
export async function startRunnerWatchdog(options: RunnerWatchdogOptions): Promise<RunnerWatchdog> {
  const { registry, service, log } = options;
  const rssMaxMb = options.rssMaxMb ?? UNTRUSTED_LIMITS.RUNNER_RSS_MAX_MB;
  const rssRecycleMb = options.rssRecycleMb ?? UNTRUSTED_LIMITS.RUNNER_RSS_RECYCLE_MB;
  let child: ChildProcess | undefined;
  let url = "";
  // The secret of the current runner's POST /drain, and whether it was asked already.
  let controlToken = "";
  let drainAsked = false;
  // Set by recycle(): the next poll asks the runner to drain, as it asks one past RUNNER_RSS_RECYCLE_MB.
  let recycleAsked = false;
  let restarts = 0;
  let stopped = false;
  let replacing = false;
  const forward = (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n")) if (line.trim() !== "") log(`[runner] ${line}`);
  };

  const start = async () => {
    // A killed runner leaves its registry entry; a new one would not register until it is 90 s stale.
    rmSync(join(registry, service), { force: true });
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    controlToken = randomBytes(32).toString("hex");
    drainAsked = false;
    const started = spawn(process.execPath, [RUNNER_PROCESS], {
      // Its own process group, so a kill takes workerd with it; its temporary files stay in the OS's folder.
      detached: true,
      cwd: dirname(registry),
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        RUNNER_PORT: String(port),
        RUNNER_REGISTRY: registry,
        RUNNER_SERVICE: service,
        RUNNER_OS_SERVICE: options.osService,
        RUNNER_PERSIST: options.persistTo,
        RUNNER_EGRESS_ALLOW_PRIVATE_ADDRESSES: options.egressPolicy ?? "",
        RUNNER_CONTROL_TOKEN: controlToken,
        NODE_NO_WARNINGS: "1",
        MINIFLARE_WORKERD_V8_FLAGS: `--max-old-space-size=${UNTRUSTED_LIMITS.RUNNER_HEAP_MB}`,
      },
    });
    child = started;
    started.stdout?.on("data", forward);
    started.stderr?.on("data", forward);
    started.once("exit", (code, signal) => {
      if (stopped || child !== started || replacing) return;
      log(`[watchdog] runner exited (${signal ?? `code ${code}`}): starting a new one`);
      void replace();
    });
    await waitHealthy(url, started, options.readyTimeoutMs ?? 60_000);
  };

  const replace = async () => {
    if (replacing || stopped) return;
    replacing = true;
    try {
      killGroup(child);
      restarts++;
      const begun = performance.now();
      await start();
      log(`[watchdog] runner replaced in ${Math.round(performance.now() - begun)} ms (restart ${restarts})`);
    } catch (error) {
      log(`[watchdog] runner did not restart: ${(error as Error).message}; trying again`);
      replacing = false;
      setTimeout(() => void replace(), 1_000);
      return;
    }
    replacing = false;
  };

  await start();
  log(`[watchdog] runner up at ${url}`);

  const watch = async () => {
    for (;;) {
      await sleep(UNTRUSTED_LIMITS.RUNNER_HEALTH_INTERVAL_MS);
      if (stopped) return;
      if (stopped || replacing) continue;
      const rssMb = child?.pid === undefined ? 0 : residentMb(child.pid);
      const recycling = recycleAsked ? "it was asked to recycle" : rssMb > rssRecycleMb && rssMb <= rssMaxMb ? `it held ${rssMb} MB (RUNNER_RSS_RECYCLE_MB)` : undefined;
      if (recycling !== undefined && !drainAsked) {
        // Between calls, not mid-call: it drains once idle, /health then fails and it is replaced below.
        recycleAsked = false;
        const asked = url;
        const agreed = await askDrain(asked, controlToken, recycling);
        // A runner replaced meanwhile is a new one, not asked yet.
        if (agreed && url === asked) {
          drainAsked = true;
          log(`[watchdog] runner ${recycling.replace(/^it /, "")}: draining it for replacement once no call is in flight`);
        }
      }
      const health = rssMb > rssMaxMb ? { ok: false as const, reason: `held ${rssMb} MB (RUNNER_RSS_MAX_MB)` } : await askHealth(url, UNTRUSTED_LIMITS.RUNNER_HANG_MS);
      if (stopped || replacing || health.ok) continue;
      log(`[watchdog] runner ${health.reason}: killing it`);
      await replace();
    }
  };
  void watch();

  return {
    get restarts() {
      return restarts;
    },
    async crash() {
      const before = restarts;
      const replaced = () => stopped || (restarts > before && !replacing);
      killGroup(child);
      while (!replaced()) await sleep(50);
    },
    async recycle() {
      const before = restarts;
      const replaced = () => stopped || (restarts > before && !replacing);
      recycleAsked = true;
      while (!replaced()) await sleep(50);
    },
    async stop() {
      stopped = true;
      const last = child;
      if (last && last.exitCode === null && last.signalCode === null) {
        const exited = new Promise<void>((done) => last.once("exit", () => done()));
        try {
          if (last.pid !== undefined) process.kill(-last.pid, "SIGTERM");
        } catch {
          // already gone
        }
        const timer = setTimeout(() => killGroup(last), 3_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(join(registry, service), { force: true });
    },
  };
}

/** Resident memory of a process and its descendants, in MB (0 where /proc is not there to read). */
function residentMb(pid: number): number {
  let kb = 0;
  const visit = (id: number) => {
    try {
      const status = readFileSync(`/proc/${id}/status`, "utf8");
      kb += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      for (const child of readFileSync(`/proc/${id}/task/${id}/children`, "utf8").split(" ")) if (child.trim() !== "") visit(Number(child));
    } catch {
      // gone, or no /proc here
    }
  };
  visit(pid);
  return Math.round(kb / 1024);
}

/** Asks the runner to drain; false when it did not agree (it is then watched as before). */
async function askDrain(url: string, token: string, reason: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/drain`, { method: "POST", headers: { "x-runner-control": token }, body: reason, signal: AbortSignal.timeout(UNTRUSTED_LIMITS.RUNNER_HANG_MS) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

async function askHealth(url: string, timeoutMs: number): Promise<{ ok: true } | { ok: false; reason: string }> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    return response.ok ? { ok: true } : { ok: false, reason: `answered /health with ${response.status} (${text.slice(0, 100)})` };
  } catch {
    return { ok: false, reason: `did not answer /health within ${timeoutMs} ms (RUNNER_HANG_MS)` };
  }
}

async function waitHealthy(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the runner exited (${child.signalCode ?? child.exitCode}) before it answered`);
    if ((await askHealth(url, 1_000)).ok) return;
    await sleep(50);
  }
  throw new Error(`no answer from the runner at ${url}/health within ${timeoutMs} ms`);
}

function killGroup(child: ChildProcess | undefined): void {
  if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // already gone
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

