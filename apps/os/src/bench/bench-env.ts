import type { BenchDurableObject } from "./bench-durable-object.ts";

/**
 * The bench worker's bindings: the OS's own plus `BENCH`. Only the bench configuration
 * (scripts/bench-config.ts) binds it; the deployment's wrangler.jsonc never does, so the generated
 * `Env` does not know it.
 */
export interface BenchEnv extends Env {
  BENCH: DurableObjectNamespace<BenchDurableObject>;
}
