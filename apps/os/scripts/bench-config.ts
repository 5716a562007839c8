// The bench worker's configuration, derived from the deployment's: the same Worker with
// src/bench/bench-worker.ts as its entry (the OS plus /api/bench) and the BENCH Durable Object.
// Only `pnpm bench` runs it (startLocalOs({ bench: true })); wrangler.jsonc never names either.

/** The entry module of the bench worker, relative to apps/os. */
export const BENCH_MAIN = "src/bench/bench-worker.ts";

interface WorkerConfig {
  main?: unknown;
  durable_objects?: { bindings?: unknown[] };
  migrations?: unknown[];
  [key: string]: unknown;
}

/**
 * `config` (the parsed wrangler.jsonc) extended for benchmarks: `main` is the bench worker, BENCH
 * is bound, and one migration after the deployment's makes its class SQLite-backed. (The
 * deployment's own migrations delete BenchDurableObject, which old deployments once had.)
 */
export function withBench<T extends WorkerConfig>(config: T): T {
  return {
    ...config,
    main: BENCH_MAIN,
    durable_objects: {
      ...config.durable_objects,
      bindings: [...(config.durable_objects?.bindings ?? []), { name: "BENCH", class_name: "BenchDurableObject" }],
    },
    migrations: [...(config.migrations ?? []), { tag: "bench-v1", new_sqlite_classes: ["BenchDurableObject"] }],
  };
}
