// `pnpm test:deploy`: `wrangler deploy --dry-run` of the OS Worker, so that a configuration or a
// bundle that would not deploy fails CI; then prints the Worker's upload size (gzip), the figure
// Cloudflare's size limit applies to. Needs no account and no network.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const OS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = mkdtempSync(join(tmpdir(), "iterate-os-deploy-"));
try {
  const run = spawnSync("pnpm", ["exec", "wrangler", "deploy", "--dry-run", "--outdir", outdir], {
    cwd: OS_DIR,
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_SEND_ERROR_REPORTS: "false", DO_NOT_TRACK: "1", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  });
  const output = `${run.stdout}${run.stderr}`;
  if (run.status !== 0) {
    console.error(output);
    console.error(`wrangler deploy --dry-run failed (exit ${run.status}): this configuration would not deploy`);
    process.exit(1);
  }
  // Wrangler's own figure when it prints one; otherwise our gzip of what it would upload.
  const printed = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(output);
  const files = listFiles(outdir).filter((file) => !file.endsWith(".map") && !file.endsWith("README.md"));
  const raw = files.reduce((sum, file) => sum + statSync(file).size, 0) / 1024;
  const gzip = files.reduce((sum, file) => sum + gzipSync(readFileSync(file)).length, 0) / 1024;
  console.log(`os.worker.upload: ${printed?.[1] ?? raw.toFixed(2)} KiB`);
  console.log(`os.worker.upload_gzip: ${printed?.[2] ?? gzip.toFixed(2)} KiB (target <= 1024 KiB; Cloudflare's limit is 3 MiB on the free plan, 10 MiB paid)`);
} finally {
  rmSync(outdir, { recursive: true, force: true });
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? listFiles(path) : [path];
  });
}
