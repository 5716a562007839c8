import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// End-to-end suites against a running OS. The global setup starts a fresh local OS unless
// BASE_URL (plus ITERATE_ADMIN_SECRET) points at one that is already running.
export default defineConfig({
  resolve: {
    // The Durable Streams conformance suite imports vitest 4; it registers its tests with ours.
    alias: [{ find: /^vitest$/, replacement: fileURLToPath(import.meta.resolve("vitest")) }],
  },
  test: {
    include: ["suites/**/*.test.ts", "conformance/**/*.test.ts"],
    globalSetup: ["harness/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    server: { deps: { inline: ["@durable-streams/server-conformance-tests"] } },
  },
});
