import { env } from "cloudflare:workers";
import { ITERATE_WORKER_MODULE } from "iterate/sdk";
import { contentHash } from "./content-hash.ts";
import { LIMITS } from "../limits.ts";
import { bundleRemotely } from "../bundler/bundler-client.ts";
import type { WorkerSource } from "./worker-source.ts";

export { parseWorkerSource, type WorkerSource } from "./worker-source.ts";

export interface BuiltWorker {
  mainModule: string;
  modules: Record<string, string>;
  /** Content hash of the source: the build (and the isolate) is cached under it. */
  hash: string;
}

/**
 * Modules every build resolves to this deployment's own SDK, whatever the source's files or
 * package.json say: loaded code gets `this.getItx()` from `import { IterateEntrypoint } from "iterate/worker"`,
 * and a config worker its base class from `import { IterateConfigEntrypoint } from "iterate/sdk"`
 * (the loaded-code part of `iterate/sdk`), and a config-repo processor `StreamProcessor` and
 * `defineProcessorContract` from `iterate/stream/processor` (their loaded flavour, without zod).
 */
export const PLATFORM_MODULES: Readonly<Record<string, string>> = {
  "iterate/worker": ITERATE_WORKER_MODULE,
  "iterate/sdk": ITERATE_WORKER_MODULE,
  "iterate/stream/processor": ITERATE_WORKER_MODULE,
};


/**
 * Builds by source hash, least recently used first, bounded by count and by the size of their
 * modules. A build in progress counts against the count only; its size is known when it settles.
 * A failed build is forgotten, so the next request tries again.
 */
export class WorkerBuildCache {
  readonly #maxEntries: number;
  readonly #maxChars: number;
  readonly #builds = new Map<string, { build: Promise<BuiltWorker>; chars: number }>();
  #chars = 0;

  constructor(maxEntries: number = LIMITS.WORKER_BUILDS_MAX, maxChars: number = LIMITS.WORKER_BUILDS_MAX_CHARS) {
    this.#maxEntries = maxEntries;
    this.#maxChars = maxChars;
  }

  get size(): number {
    return this.#builds.size;
  }

  /** Characters of settled builds held now. */
  get chars(): number {
    return this.#chars;
  }

  /** The build under `hash`, made with `make` when absent (or evicted). */
  get(hash: string, make: () => Promise<BuiltWorker>): Promise<BuiltWorker> {
    const known = this.#builds.get(hash);
    if (known) {
      this.#builds.delete(hash);
      this.#builds.set(hash, known);
      return known.build;
    }
    const entry = { build: make(), chars: 0 };
    this.#builds.set(hash, entry);
    this.#evict();
    entry.build.then(
      (built) => {
        if (this.#builds.get(hash) !== entry) return;
        const chars = sizeOf(built);
        // One build bigger than the whole bound is answered but not kept: it would evict everything.
        if (chars > this.#maxChars) {
          this.#builds.delete(hash);
          return;
        }
        entry.chars = chars;
        this.#chars += entry.chars;
        this.#evict();
      },
      () => {
        if (this.#builds.get(hash) === entry) this.#builds.delete(hash);
      },
    );
    return entry.build;
  }

  #evict(): void {
    for (const [hash, entry] of this.#builds) {
      if (this.#builds.size <= this.#maxEntries && this.#chars <= this.#maxChars) break;
      this.#builds.delete(hash);
      this.#chars -= entry.chars;
    }
  }
}

function sizeOf(built: BuiltWorker): number {
  let chars = built.mainModule.length;
  for (const [name, module] of Object.entries(built.modules)) chars += name.length + module.length;
  return chars;
}

const builds = new WorkerBuildCache();

/**
 * Bundles a worker's files (TypeScript included) in the bundler Worker (bundler/). Builds are
 * cached by a hash of their source (within LIMITS.WORKER_BUILDS_MAX and LIMITS.WORKER_BUILDS_MAX_CHARS), so
 * identical sources build once per isolate of the OS while they stay in the cache. A
 * build error is INVALID_ARGUMENT naming the file and line.
 */
export function buildWorker(source: WorkerSource): Promise<BuiltWorker> {
  return (async () => {
    const hash = await sourceHash(source);
    return builds.get(hash, () => bundle(source, hash));
  })();
}

async function bundle(source: WorkerSource, hash: string): Promise<BuiltWorker> {
  const built = await bundleRemotely({ ...source, virtualModules: { ...PLATFORM_MODULES }, npm: env.BUNDLER_NPM !== "off" });
  return { ...built, hash };
}

// The platform modules are part of the input: a deployment with another SDK builds afresh.
async function sourceHash(source: WorkerSource): Promise<string> {
  const ordered = JSON.stringify([
    source.entryPoint ?? null,
    Object.entries(source.files).toSorted(([a], [b]) => (a < b ? -1 : 1)),
    PLATFORM_MODULES,
  ]);
  return contentHash(ordered, 16);
}
