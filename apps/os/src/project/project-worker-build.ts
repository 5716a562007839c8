import { ItxError } from "iterate/errors";
import { LIMITS } from "../limits.ts";
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

// The stores holding a large artifact in this isolate, least recently used first, and the
// characters they hold together (PROJECT_ARTIFACTS_IN_MEMORY_MAX_CHARS): each project's own bound
// is one artifact, but projects are many and, locally, share one process.
const holding = new Set<ArtifactStore>();
let heldChars = 0;

/** Characters of large artifacts kept in memory in this isolate (tests). */
export function artifactCharsInMemory(): number {
  return heldChars;
}

/**
 * Artifacts by content key in the project's SQLite: a restart does not rebuild. One too big for a
 * row is kept in memory instead (the newest such one), so requests to the project's host are not
 * each a rebuild of it until the object is evicted, or until other projects' large artifacts
 * take the isolate's room for them.
 */
export class ArtifactStore {
  readonly #sql: SqlStorage;
  #large: { built: BuiltWorker; chars: number } | undefined;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS project_artifacts (hash TEXT PRIMARY KEY, built TEXT NOT NULL)");
  }

  get(hash: string): BuiltWorker | undefined {
    const large = this.#large;
    if (large?.built.hash === hash) {
      holding.delete(this);
      holding.add(this);
      return large.built;
    }
    const row = this.#sql.exec<{ built: string }>("SELECT built FROM project_artifacts WHERE hash = ?", hash).toArray()[0];
    return row ? (JSON.parse(row.built) as BuiltWorker) : undefined;
  }

  /** Keeps `built`: in a row (only the newest few are kept), or in memory when it is too big for one. */
  put(built: BuiltWorker): void {
    const text = JSON.stringify(built);
    if (text.length > LIMITS.PROJECT_ARTIFACT_MAX_CHARS) {
      this.#letGo();
      this.#large = { built, chars: text.length };
      holding.add(this);
      heldChars += text.length;
      for (const oldest of holding) {
        if (heldChars <= LIMITS.PROJECT_ARTIFACTS_IN_MEMORY_MAX_CHARS || oldest === this) break;
        oldest.#letGo();
      }
      return;
    }
    this.#sql.exec("INSERT OR REPLACE INTO project_artifacts (hash, built) VALUES (?, ?)", built.hash, text);
    this.#sql.exec("DELETE FROM project_artifacts WHERE rowid NOT IN (SELECT rowid FROM project_artifacts ORDER BY rowid DESC LIMIT 4)");
  }

  #letGo(): void {
    if (!this.#large) return;
    heldChars -= this.#large.chars;
    this.#large = undefined;
    holding.delete(this);
  }
}
