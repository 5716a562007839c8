// Node-only: builds the dashboard (apps/dashboard, Vite) into the folder the OS serves as static
// assets (wrangler.jsonc `assets.directory`), when it is missing or older than its sources. The
// local OS (`pnpm dev`, the e2e harness, the benchmarks) and the OS's own tests call it first.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const DASHBOARD = join(ROOT, "apps/dashboard");
export const DASHBOARD_DIST = join(DASHBOARD, "dist");

// What the bundle is made of: the app and the parts of the SDK it imports.
const SOURCES = [join(DASHBOARD, "src"), join(DASHBOARD, "index.html"), join(DASHBOARD, "public"), join(DASHBOARD, "vite.config.ts"), join(DASHBOARD, "vite.sandbox.config.ts"), join(DASHBOARD, "package.json"), join(ROOT, "packages/iterate/src")];

/** Builds the dashboard unless `dist/index.html` is newer than every source. Answers whether it built. */
export function ensureDashboardBuilt(options: { log?: (line: string) => void } = {}): boolean {
  const built = join(DASHBOARD_DIST, "index.html");
  if (existsSync(built) && statSync(built).mtimeMs >= newest(SOURCES)) return false;
  options.log?.("building the dashboard (apps/dashboard) ...");
  // Built beside and swapped in whole, so a reader never sees half a build.
  const staging = `${DASHBOARD_DIST}.staging-${process.pid}`;
  const vite = join(dirname(createRequire(join(DASHBOARD, "package.json")).resolve("vite/package.json")), "bin", "vite.js");
  try {
    execFileSync(process.execPath, [vite, "build", "--outDir", staging, "--emptyOutDir"], { cwd: DASHBOARD, stdio: ["ignore", "pipe", "inherit"] });
    // The REPL sandbox's classic script, into the same folder (vite.sandbox.config.ts says why).
    execFileSync(process.execPath, [vite, "build", "-c", "vite.sandbox.config.ts", "--outDir", staging], { cwd: DASHBOARD, stdio: ["ignore", "pipe", "inherit"] });
    rmSync(DASHBOARD_DIST, { recursive: true, force: true });
    renameSync(staging, DASHBOARD_DIST);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return true;
}

function newest(paths: string[]): number {
  let latest = 0;
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    if (!stat.isDirectory()) latest = Math.max(latest, stat.mtimeMs);
    else for (const entry of readdirSync(path, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && !entry.name.endsWith(".test.ts")) latest = Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
    }
  }
  return latest;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const built = ensureDashboardBuilt({ log: (line) => console.log(line) });
  console.log(built ? `dashboard built into ${DASHBOARD_DIST}` : "dashboard is up to date");
}
