// `pnpm test:deploy`: `wrangler deploy --dry-run` of the OS Worker, so that a configuration or a
// bundle that would not deploy fails CI; then prints the Worker's upload size (gzip), the figure
// Cloudflare's size limit applies to, and checks that no benchmark code ships in it (the bench
// worker, scripts/bench-config.ts, is for `pnpm bench` only). Needs no account and no network.
import { measureDeploySize } from "./deploy-size.ts";

const size = measureDeploySize();
if (!size.ok) {
  console.error(size.output);
  console.error(`wrangler deploy --dry-run failed (exit ${size.status}): this configuration would not deploy`);
  process.exit(1);
}
// The benchmark root answers anyone, unauthenticated: it must never be part of a deployment.
const benchCode = /\b(BenchDurableObject|BenchRootRpcTarget)\b/.exec(size.code);
if (benchCode) {
  console.error(`the deployment's bundle contains ${benchCode[1]}: benchmark code must stay in src/bench/bench-worker.ts, which only \`pnpm bench\` runs`);
  process.exit(1);
}
console.log(`os.worker.upload: ${size.uploadKiB.toFixed(2)} KiB`);
console.log(`os.worker.upload_gzip: ${size.gzipKiB.toFixed(2)} KiB (target <= 1024 KiB)`);
