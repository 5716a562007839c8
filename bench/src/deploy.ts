import { DEPLOYED_WORKERS, measureDeploySize, OS_WORKER_GZIP_MAX_KIB, type DeployedWorker } from "@iterate/os/deploy-size";
import { report } from "./stats.ts";

/** Each Worker's deployable size: what `wrangler deploy --dry-run` would upload, gzip. Target: the OS Worker at most 1 MiB. */
export function measureDeploy(): void {
  for (const worker of Object.keys(DEPLOYED_WORKERS) as DeployedWorker[]) {
    const size = measureDeploySize(worker);
    if (!size.ok) throw new Error(`wrangler deploy --dry-run of ${DEPLOYED_WORKERS[worker]} failed (exit ${size.status}):\n${size.output}`);
    report(`deploy.${worker}.upload`, size.uploadKiB, "KiB");
    const target = worker === "os_worker" ? ` (target <= ${OS_WORKER_GZIP_MAX_KIB}: ${size.gzipKiB <= OS_WORKER_GZIP_MAX_KIB ? "met" : "missed"})` : "";
    report(`deploy.${worker}.upload_gzip`, size.gzipKiB, `KiB${target}`);
  }
}
