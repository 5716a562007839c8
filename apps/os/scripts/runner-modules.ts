// Node-only: the runner Worker's modules, without a bundler. The runner (src/runner/runner-worker.ts)
// imports only `cloudflare:workers`, types and import-free modules of this app by relative path;
// each is loaded as a module of its own with its types stripped, named by its path relative to src/ (RUNNER_MODULES_ROOT),
// so that the imports resolve as written. Anything else it imports is refused here, at start.
import { readFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The runner's modules are named relative to this folder. */
export const RUNNER_MODULES_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "src");
const ENTRY = join(RUNNER_MODULES_ROOT, "runner", "runner-worker.ts");

// Value imports (not `import type`) and re-exports with a module specifier.
const IMPORT = /^\s*(import|export)\s+(?!type\s)[^;]*?\sfrom\s+["']([^"']+)["'];?/gm;

export interface RunnerModule {
  type: "ESModule";
  path: string;
  contents: string;
}

/** The runner Worker and every module it reaches, the entry first. Throws on an import it cannot load. */
export function runnerModules(): RunnerModule[] {
  const modules: RunnerModule[] = [];
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, "utf8");
    modules.push({ type: "ESModule", path: file, contents: stripTypeScriptTypes(source) });
    for (const [, , specifier] of source.matchAll(IMPORT)) {
      if (specifier === "cloudflare:workers") continue;
      if (!specifier?.startsWith(".")) throw new Error(`the runner loads without a bundler: ${relative(RUNNER_MODULES_ROOT, file)} imports ${JSON.stringify(specifier)}`);
      visit(normalize(join(dirname(file), specifier)));
    }
  };
  visit(ENTRY);
  return modules;
}
