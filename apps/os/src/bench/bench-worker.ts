// The OS Worker extended for `pnpm bench`: every route and Durable Object of src/worker.ts, plus
// an unauthenticated benchmark root at /api/bench and its Durable Object. Only the bench
// configuration (scripts/bench-config.ts) runs this module; the deployment's entry is
// src/worker.ts, which neither imports nor exports anything from src/bench/.
import os from "../worker.ts";
import { serveCapnWeb } from "../api/api-route.ts";
import { BenchRootRpcTarget } from "./bench-root.ts";
import type { BenchEnv } from "./bench-env.ts";

export * from "../worker.ts";
export { BenchDurableObject } from "./bench-durable-object.ts";

// The benchmark root's path (not exported: a Worker module's exports must all be handlers).
const BENCH_ROUTE = "/api/bench";

export default {
  async fetch(request: Request, env: BenchEnv, ctx: ExecutionContext): Promise<Response> {
    if (new URL(request.url).pathname === BENCH_ROUTE) {
      // The benchmark root has no authenticate(): its sessions are not held to the budget of a
      // session that has not authenticated yet.
      return serveCapnWeb(request, ctx, (connection) => {
        connection.markAuthenticated();
        return new BenchRootRpcTarget(env);
      });
    }
    return os.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<BenchEnv>;
