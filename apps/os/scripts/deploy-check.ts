// `pnpm test:deploy`: `wrangler deploy --dry-run` of each of the OS's Workers, so that a
// configuration or a bundle that would not deploy fails CI; prints each Worker's upload size
// (gzip), the figure Cloudflare's size limit applies to, and fails when the OS Worker is past
// OS_WORKER_GZIP_MAX_KIB or carries benchmark code (the bench worker, scripts/bench-config.ts, is
// for `pnpm bench` only). Needs no account and no network.
import { DEPLOYED_WORKERS, measureDeploySize, OS_WORKER_GZIP_MAX_KIB, type DeployedWorker } from "./deploy-size.ts";

let failed = false;
for (const worker of Object.keys(DEPLOYED_WORKERS) as DeployedWorker[]) {
  const size = measureDeploySize(worker);
  if (!size.ok) {
    console.error(size.output);
    console.error(`wrangler deploy --dry-run of ${DEPLOYED_WORKERS[worker]} failed (exit ${size.status}): this configuration would not deploy`);
    failed = true;
    continue;
  }
  const target = worker === "os_worker" ? ` (OS_WORKER_GZIP_MAX_KIB: <= ${OS_WORKER_GZIP_MAX_KIB} KiB)` : "";
  console.log(`${worker}.upload: ${size.uploadKiB.toFixed(2)} KiB`);
  console.log(`${worker}.upload_gzip: ${size.gzipKiB.toFixed(2)} KiB${target}`);
  if (worker === "os_worker" && size.gzipKiB > OS_WORKER_GZIP_MAX_KIB) {
    console.error(`the OS Worker uploads ${size.gzipKiB.toFixed(2)} KiB gzip, past OS_WORKER_GZIP_MAX_KIB (${OS_WORKER_GZIP_MAX_KIB} KiB): move rarely used heavy code into another Worker (docs/decisions/0019-bundler-worker.md)`);
    failed = true;
  }
  // The benchmark root answers anyone, unauthenticated: it must never be part of a deployment.
  const benchCode = /\b(BenchDurableObject|BenchRootRpcTarget)\b/.exec(size.code);
  if (benchCode) {
    console.error(`${DEPLOYED_WORKERS[worker]}'s bundle contains ${benchCode[1]}: benchmark code must stay in src/bench/bench-worker.ts, which only \`pnpm bench\` runs`);
    failed = true;
  }
}
if (failed) process.exit(1);
