import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { startRunnerWatchdog, type RunnerWatchdog } from "@iterate/os/runner-watchdog";
import { LIMITS } from "@iterate/os/limits";

// The runner's watchdog on its own, without an OS: it replaces a runner that stops answering,
// one that exits, and one past its memory cap, and drops the dead runner's registry entry.

let watchdog: RunnerWatchdog | undefined;
let folder = "";

afterEach(async () => {
  await watchdog?.stop();
  watchdog = undefined;
  rmSync(folder, { recursive: true, force: true });
});

async function start(rssMaxMb?: number, rssRecycleMb?: number): Promise<{ lines: string[]; registry: string }> {
  folder = mkdtempSync(join(tmpdir(), "iterate-watchdog-"));
  const registry = join(folder, "registry");
  mkdirSync(registry);
  const lines: string[] = [];
  watchdog = await startRunnerWatchdog({ registry, service: "test-runner", osService: "test-os", persistTo: join(folder, "runner-state"), log: (line) => lines.push(line), ...(rssMaxMb === undefined ? {} : { rssMaxMb }), ...(rssRecycleMb === undefined ? {} : { rssRecycleMb }) });
  return { lines, registry };
}

// The runner's workerd: the child of the runner's Node process, whose pid the runner prints
// (its `ready` line may arrive just after the watchdog saw it answer).
async function runnerOf(lines: string[], readyLines = 1): Promise<number> {
  const ready = () => lines.filter((line) => line.includes("ready on"));
  await expect.poll(() => ready().length >= readyLines, { timeout: 5_000, interval: 50 }).toBe(true);
  return Number(/\(pid (\d+)\)/.exec(ready().at(-1) ?? "")?.[1]);
}

async function workerdOf(lines: string[], readyLines = 1): Promise<number> {
  const node = await runnerOf(lines, readyLines);
  return Number(execFileSync("pgrep", ["-P", String(node)]).toString().trim().split("\n")[0]);
}

describe("the runner watchdog", () => {
  test("replaces a runner that does not answer /health within RUNNER_HANG_MS, and registers the new one", { timeout: 60_000 }, async () => {
    const { lines, registry } = await start();
    const frozen = await workerdOf(lines);
    const stoppedAt = Date.now();
    process.kill(frozen, "SIGSTOP");
    await expect.poll(() => watchdog?.restarts === 1, { timeout: 20_000, interval: 50 }).toBe(true);
    const detected = lines.find((line) => line.includes("RUNNER_HANG_MS"));
    expect(detected).toBeDefined();
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(LIMITS.RUNNER_HANG_MS);
    // The new runner registered under the same name (the dead one's entry was dropped first).
    await expect.poll(() => existsSync(join(registry, "test-runner")), { timeout: 5_000, interval: 50 }).toBe(true);
    expect(JSON.parse(readFileSync(join(registry, "test-runner"), "utf8"))).toHaveProperty("defaultEntrypointService");
    expect(await workerdOf(lines, 2)).not.toBe(frozen);
  });

  test("replaces a runner that exits", { timeout: 60_000 }, async () => {
    const { lines } = await start();
    // The whole runner dies at once (its process group), as when V8 aborts it.
    process.kill(-(await runnerOf(lines)), "SIGKILL");
    await expect.poll(() => watchdog?.restarts === 1, { timeout: 20_000, interval: 50 }).toBe(true);
    expect(lines.some((line) => line.includes("runner exited (SIGKILL)"))).toBe(true);
  });

  test("replaces a runner past its resident-memory cap", { timeout: 60_000 }, async () => {
    // A cap no runner fits under: it is replaced at the first poll.
    const { lines } = await start(1);
    await expect.poll(() => (watchdog?.restarts ?? 0) >= 1, { timeout: 20_000, interval: 50 }).toBe(true);
    expect(lines.some((line) => /held \d+ MB \(RUNNER_RSS_MAX_MB\)/.test(line))).toBe(true);
  });

  test("drains a runner past RUNNER_RSS_RECYCLE_MB and then replaces it", { timeout: 60_000 }, async () => {
    // No runner fits under 1 MB: the first poll asks it to drain. With no call in flight it has
    // drained at once, fails /health, and is replaced (not killed for its size: that cap is far).
    const { lines } = await start(undefined, 1);
    await expect.poll(() => (watchdog?.restarts ?? 0) >= 1, { timeout: 20_000, interval: 50 }).toBe(true);
    expect(lines.some((line) => /runner held \d+ MB \(RUNNER_RSS_RECYCLE_MB\): draining it for replacement once no call is in flight/.test(line))).toBe(true);
    expect(lines.some((line) => /answered \/health with 503 \(drained: it held \d+ MB \(RUNNER_RSS_RECYCLE_MB\)\)/.test(line))).toBe(true);
    expect(lines.some((line) => line.includes("RUNNER_RSS_MAX_MB"))).toBe(false);
  });

  test("POST /drain takes only the watchdog's secret: anyone else who reaches the port is refused and nothing drains", { timeout: 60_000 }, async () => {
    const { lines } = await start();
    const url = /runner up at (http:\/\/127\.0\.0\.1:\d+)/.exec(lines.find((line) => line.includes("runner up at")) ?? "")?.[1] ?? "";
    expect(url).not.toBe("");
    for (const headers of [{}, { "x-runner-control": "guess" }, { "x-runner-control": "" }] as Array<Record<string, string>>) {
      const answer = await fetch(`${url}/drain`, { method: "POST", headers, body: "let me in" });
      expect(answer.status).toBe(403);
    }
    expect(await (await fetch(`${url}/health`)).text()).toBe("ok");
    expect(watchdog?.restarts).toBe(0);
  });
});
