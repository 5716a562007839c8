import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { kCurrentWorker } from "miniflare";
import { defineConfig } from "vitest/config";

// Workerd tests: the real runtime, real Durable Object SQLite, the real Worker Loader.
export default defineConfig({
  test: { include: ["src/**/*.test.ts", "test/**/*.test.ts"], testTimeout: 20_000 },
  plugins: [
    cloudflareTest({
      main: "./test/test-worker.ts",
      wrangler: { configPath: "./wrangler.jsonc" },
      remoteBindings: false,
      // Loaded isolates call back through these loopback entrypoints (ctx.exports); the plugin
      // does not find exports re-exported by the test worker on its own.
      additionalExports: {
        ItxEntrypoint: "WorkerEntrypoint",
        EgressEntrypoint: "WorkerEntrypoint",
        RunnerEntrypoint: "WorkerEntrypoint",
        RunnerCallbackEntrypoint: "WorkerEntrypoint",
        ScopeItxEntrypoint: "WorkerEntrypoint",
        ScopeEgressEntrypoint: "WorkerEntrypoint",
        BundlerEntrypoint: "WorkerEntrypoint",
      },
      miniflare: {
        bindings: { ITERATE_ADMIN_SECRET: "workerd-test-secret", ITERATE_SESSION_KEY: "workerd-test-session-key", PROCESSOR_HOST_BINDINGS: "CAPABILITY_HOST,AGENT,PROJECT,USER_PROCESSOR,TEST_PROCESSORS,ECHO_PROCESSORS" },
        // The bundler Worker's entrypoint, exported by the test worker: builds cross a real service
        // binding as in a deployment, in this workerd (wrangler.jsonc binds the separate Worker).
        serviceBindings: { BUNDLER: { name: kCurrentWorker, entrypoint: "BundlerEntrypoint" } },
        durableObjects: {
          TEST_PROCESSORS: { className: "TallyProcessorHost", useSQLite: true },
          ECHO_PROCESSORS: { className: "EchoProcessorHost", useSQLite: true },
        },
      },
    }),
  ],
});
