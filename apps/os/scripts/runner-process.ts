// Node-only: the local runner's process. One workerd (started through the Miniflare API, which
// answers a hop in ~2 ms where a second `wrangler dev` takes 4-5) running src/runner/runner-worker.ts,
// registered in the OS's dev registry so that the OS's RUNNER binding reaches it. The watchdog
// (runner-watchdog.ts) starts it in a process group of its own and kills the group when it hangs.
//   node runner-process.ts   (RUNNER_PORT, RUNNER_REGISTRY, RUNNER_SERVICE, RUNNER_OS_SERVICE, RUNNER_PERSIST from the environment)
import { Miniflare, convertV4MiniflareOptions } from "miniflare";
import { UNTRUSTED_LIMITS } from "../src/worker-loader/untrusted-limits.ts";
import { RUNNER_MODULES_ROOT, runnerModules } from "./runner-modules.ts";
import { runnerNetworkBindings } from "./runner-network.ts";

const port = Number(process.env.RUNNER_PORT);
const registry = process.env.RUNNER_REGISTRY;
const service = process.env.RUNNER_SERVICE;
const osService = process.env.RUNNER_OS_SERVICE;
// Facets' SQLite (durable dynamic workers and sources) is kept here, so a replaced runner finds it.
const persist = process.env.RUNNER_PERSIST;
if (!Number.isInteger(port) || !registry || !service || !osService || !persist) {
  console.error("runner-process: RUNNER_PORT, RUNNER_REGISTRY, RUNNER_SERVICE, RUNNER_OS_SERVICE and RUNNER_PERSIST must be set");
  process.exit(2);
}

// The OS's egress policy: the runner's direct road (src/runner/direct-egress.ts) applies it to the
// URL, and this process's network filter to the address a name resolved to. A policy of named
// private hosts has no filter (their addresses are not known here): nothing then leaves directly.
const direct = runnerNetworkBindings(process.env.RUNNER_EGRESS_ALLOW_PRIVATE_ADDRESSES ?? "");
const runner = new Miniflare(
  convertV4MiniflareOptions({
    workers: [
      {
        name: service,
        modules: runnerModules(),
        modulesRoot: RUNNER_MODULES_ROOT,
        compatibilityDate: "2026-08-01",
        workerLoaders: { LOADER: {} },
        bindings: {
          DRAIN_MAX_MS: UNTRUSTED_LIMITS.RUNNER_DRAIN_MAX_MS,
          DRAIN_NOTICE_MS: UNTRUSTED_LIMITS.RUNNER_DRAIN_NOTICE_MS,
          // The watchdog's secret for POST /drain (runner-worker.ts): untrusted code in this
          // runner may reach its port, but cannot know this.
          CONTROL_TOKEN: process.env.RUNNER_CONTROL_TOKEN ?? "",
          EGRESS_INLINE_MAX_BYTES: UNTRUSTED_LIMITS.RUNNER_EGRESS_INLINE_MAX_BYTES,
          ...direct.bindings,
        },
        durableObjects: { FACET_HOSTS: { className: "FacetHostDurableObject", useSQLite: true } },
        // The OS, through the dev registry: loaded code's env.ITX and fetch() call back into it.
        // NETWORK: the direct road's way out, a network service that admits only the addresses the
        // policy allows, judged after DNS (a public-looking name that resolves to 10.x is refused).
        serviceBindings: { OS: { name: osService, entrypoint: "RunnerCallbackEntrypoint" }, ...direct.serviceBindings },
      },
    ],
    host: "127.0.0.1",
    port,
    unsafeDevRegistryPath: registry,
    resourcePersistencePath: persist,
  }),
);
await runner.ready;
console.log(`runner ${service} ready on 127.0.0.1:${port} (pid ${process.pid})`);

const stop = async () => {
  await runner.dispose();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

// The runner lives only as long as the OS that started it: when that process is gone (killed
// without the chance to stop us), this one is re-parented, and stops rather than linger.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void stop();
}, 1_000).unref();
