// What `wrangler deploy` would upload for each of the OS's Workers, measured by a dry run (no
// account, no network). Used by `pnpm test:deploy` (scripts/deploy-check.ts) and by `pnpm bench`.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { ensureDashboardBuilt } from "./dashboard-build.ts";

const OS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The Workers a deployment uploads, by the name figures use, with their wrangler configs (apps/os). */
export const DEPLOYED_WORKERS = {
  os_worker: "wrangler.jsonc",
  bundler_worker: "wrangler.bundler.jsonc",
} as const;
export type DeployedWorker = keyof typeof DEPLOYED_WORKERS;

/**
 * The most the OS Worker may upload, gzip: Cloudflare's limit is larger, but everything in it is
 * parsed when an isolate of the OS starts, so rarely used heavy code lives in other Workers
 * (docs/decisions/0019-bundler-worker.md).
 */
export const OS_WORKER_GZIP_MAX_KIB = 1024;

/** A dry run's outcome: the sizes in KiB when it succeeded, wrangler's output when it did not. */
export type DeploySize =
  | { ok: true; uploadKiB: number; gzipKiB: number; /** The text of the JavaScript modules it would upload. */ code: string }
  | { ok: false; status: number | null; output: string };

/** Runs `wrangler deploy --dry-run` of one Worker of apps/os into a temporary folder and measures what it would upload. */
export function measureDeploySize(worker: DeployedWorker = "os_worker"): DeploySize {
  // wrangler.jsonc's `assets` names the dashboard's build: a deployment uploads it beside the
  // Worker (not inside it), and the dry run refuses a missing folder.
  if (worker === "os_worker") ensureDashboardBuilt();
  const outdir = mkdtempSync(join(tmpdir(), "iterate-os-deploy-"));
  try {
    const run = spawnSync("pnpm", ["exec", "wrangler", "deploy", "--dry-run", "--config", DEPLOYED_WORKERS[worker], "--outdir", outdir], {
      cwd: OS_DIR,
      encoding: "utf8",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_SEND_ERROR_REPORTS: "false", DO_NOT_TRACK: "1", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
    });
    const output = `${run.stdout}${run.stderr}`;
    if (run.status !== 0) return { ok: false, status: run.status, output };
    const files = listFiles(outdir).filter((file) => !file.endsWith(".map") && !file.endsWith("README.md"));
    const code = files
      .filter((file) => /\.(m?js|cjs)$/.test(file))
      .map((file) => readFileSync(file, "utf8"))
      .join("\n");
    // Wrangler's own figure when it prints one; otherwise our gzip of what it would upload.
    const printed = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(output);
    if (printed) return { ok: true, uploadKiB: Number(printed[1]), gzipKiB: Number(printed[2]), code };
    const uploadKiB = files.reduce((sum, file) => sum + statSync(file).size, 0) / 1024;
    const gzipKiB = files.reduce((sum, file) => sum + gzipSync(readFileSync(file)).length, 0) / 1024;
    return { ok: true, uploadKiB, gzipKiB, code };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? listFiles(path) : [path];
  });
}
