// `pnpm test:deploy`: `wrangler deploy --dry-run` of the OS Worker, so that a configuration or a
// bundle that would not deploy fails CI; then prints the Worker's upload size (gzip), the figure
// Cloudflare's size limit applies to. Needs no account and no network.
import { measureDeploySize } from "./deploy-size.ts";

const size = measureDeploySize();
if (!size.ok) {
  console.error(size.output);
  console.error(`wrangler deploy --dry-run failed (exit ${size.status}): this configuration would not deploy`);
  process.exit(1);
}
console.log(`os.worker.upload: ${size.uploadKiB.toFixed(2)} KiB`);
console.log(`os.worker.upload_gzip: ${size.gzipKiB.toFixed(2)} KiB (target <= 1024 KiB)`);
