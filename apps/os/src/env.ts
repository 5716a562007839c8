import type { BenchDurableObject } from "./bench/bench-durable-object.ts";
import type { StreamDurableObject } from "./stream/stream-durable-object.ts";
import type { CapabilityHostDurableObject } from "./capability-host/capability-host-durable-object.ts";

/** The bindings and variables of the OS Worker (see wrangler.jsonc). */
export interface Env {
  /** The deployment's admin secret. Unset means the admin lanes refuse everyone. */
  ITERATE_ADMIN_SECRET?: string;
  /** "1" exposes the benchmark root at /api/bench. Only the bench harness sets it. */
  ITERATE_BENCH?: string;
  /** One Stream Durable Object per stream, named by its coordinate `<projectId>:<path>`. */
  STREAM: DurableObjectNamespace<StreamDurableObject>;
  /** One capability host per context, named `<projectId>:<path>`; also the context stream's processor host. */
  CAPABILITY_HOST_PROCESSORS: DurableObjectNamespace<CapabilityHostDurableObject>;
  BENCH: DurableObjectNamespace<BenchDurableObject>;
  LOADER: WorkerLoader;
}
