// The OS worker as workerd tests run it: everything the deployment exports, plus test-only
// Durable Objects (bound in vitest.config.ts). Production never loads this file.
export * from "../src/worker.ts";
export { default } from "../src/worker.ts";
export { TallyProcessorHost } from "./tally-processor.ts";
export { EchoProcessorHost } from "./echo-processor.ts";
// The runner's entrypoints, so that run-script.test.ts can speak its protocol over a loopback binding.
export { RunnerEntrypoint, ScopeEgressEntrypoint, ScopeItxEntrypoint } from "../src/runner/runner-worker.ts";
// The bundler Worker's entrypoint, bound as BUNDLER in vitest.config.ts (a separate Worker when deployed).
export { BundlerEntrypoint } from "../src/bundler/bundler-worker.ts";
