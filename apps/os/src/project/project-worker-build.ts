import { ItxError } from "iterate/errors";
import { ITERATE_WORKER_MODULE } from "iterate/sdk";
import { contentHash } from "../worker-loader/content-hash.ts";
import { buildWorker, PLATFORM_MODULES, type BuiltWorker } from "../worker-loader/worker-build.ts";
import { CONFIG_TEMPLATE_ENTRY, CONFIG_TEMPLATE_FILES, CONFIG_TEMPLATE_MODULES, CONFIG_TEMPLATE_SDK_MODULE } from "./config-template.generated.ts";

/** The files of /repos/config a project worker is built from: its code, not its docs or package.json. */
export const CONFIG_WORKER_INCLUDE = ["**/*.ts", "**/*.js", "**/*.mjs"];

/** The config worker's code among `files`: what its build depends on. */
export function workerFiles(files: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(files).filter(([path]) => /\.(ts|js|mjs)$/.test(path)));
}

/** The content key of a config worker's build: its files, its entry and the SDK it links. */
export async function artifactKey(files: Record<string, string>): Promise<string> {
  const ordered = Object.entries(files).toSorted(([a], [b]) => (a < b ? -1 : 1));
  return contentHash(JSON.stringify(["config-worker", CONFIG_TEMPLATE_ENTRY, ordered, PLATFORM_MODULES]), 16);
}

const TEMPLATE_CODE = workerFiles(CONFIG_TEMPLATE_FILES);

/** Whether `files` are exactly the template's code: then the prebuilt seed serves. */
export function isTemplateCode(files: Record<string, string>): boolean {
  const paths = Object.keys(files);
  return paths.length === Object.keys(TEMPLATE_CODE).length && paths.every((path) => files[path] === TEMPLATE_CODE[path]);
}

/**
 * Builds a config worker. The template's own code was built when the OS was (by the generator);
 * anything else goes through the bundler, with `worker.ts` as the entry. A build error is
 * INVALID_ARGUMENT (deterministic: the same files fail the same way).
 */
export async function buildConfigWorker(files: Record<string, string>, hash: string): Promise<BuiltWorker> {
  if (isTemplateCode(files)) {
    return { mainModule: CONFIG_TEMPLATE_ENTRY.replace(/\.ts$/, ".js"), modules: { ...CONFIG_TEMPLATE_MODULES, [CONFIG_TEMPLATE_SDK_MODULE]: ITERATE_WORKER_MODULE }, hash };
  }
  if (!(CONFIG_TEMPLATE_ENTRY in files)) throw new ItxError("INVALID_ARGUMENT", `/repos/config has no ${CONFIG_TEMPLATE_ENTRY}`, { details: { reason: "build-failed" } });
  const built = await buildWorker({ files, entryPoint: CONFIG_TEMPLATE_ENTRY });
  return { ...built, hash };
}
