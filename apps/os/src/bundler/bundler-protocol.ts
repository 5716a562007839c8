// What the OS and the bundler Worker say to each other over the BUNDLER service binding. Types
// only: the OS imports this file without importing the bundler (and its 14 MB of esbuild wasm).
import type { Coded } from "../api/coded-result.ts";

/** One build: a worker's files, its entry, and the modules every import of theirs resolves to. */
export interface BundleRequest {
  files: Record<string, string>;
  entryPoint?: string;
  /** Exact specifiers resolved before the files and node_modules (the deployment's own SDK). */
  virtualModules: Record<string, string>;
  /**
   * False when the deployment installs no npm packages (the OS's `BUNDLER_NPM` is "off"): a build
   * that would fetch one is refused (INVALID_ARGUMENT, `details.reason: "npm-off"`).
   */
  npm?: boolean;
}

/** A bundle: the main module's name and every module's text. */
export interface Bundle {
  mainModule: string;
  modules: Record<string, string>;
}

/**
 * The bundler answers failures as values (`Coded`): INVALID_ARGUMENT for input that does not
 * build or crosses a limit (`details.reason: "build-failed"` or `details.limit`),
 * RESOURCE_EXHAUSTED for a bundle past BUNDLE_OUTPUT_MAX_CHARS.
 */
export type BundleAnswer = Coded<Bundle>;

/** The RPC surface of the bundler's entrypoint (`BundlerEntrypoint` in bundler-worker.ts). */
export interface BundlerApi {
  bundle(request: BundleRequest): Promise<BundleAnswer>;
}
