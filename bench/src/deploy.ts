import { measureDeploySize } from "@iterate/os/deploy-size";
import { report } from "./stats.ts";

/** The OS Worker's deployable size: what `wrangler deploy --dry-run` would upload, gzip. Target: at most 1 MiB. */
export function measureDeploy(): void {
  const size = measureDeploySize();
  if (!size.ok) throw new Error(`wrangler deploy --dry-run failed (exit ${size.status}):\n${size.output}`);
  report("deploy.os_worker.upload", size.uploadKiB, "KiB");
  report("deploy.os_worker.upload_gzip", size.gzipKiB, `KiB (target <= 1024: ${size.gzipKiB <= 1024 ? "met" : "missed"})`);
}
