// The bundler: a Worker of its own (wrangler.bundler.jsonc, service `iterate-bundler`) that turns
// user source into bundles for the OS, which reaches it through its BUNDLER service binding. It
// exists so the OS Worker does not ship esbuild's 14 MB wasm (docs/decisions/0019-bundler-worker.md),
// and so that untrusted source is parsed somewhere that holds nothing: no secrets, no bindings, no
// state. Its answers are plain data the OS checks again before it loads anything.
import { WorkerEntrypoint } from "cloudflare:workers";
import { asCoded } from "../api/coded-result.ts";
import { bundleSource } from "./bundle-source.ts";
import type { BundleAnswer, BundleRequest, BundlerApi } from "./bundler-protocol.ts";

/** The OS's entrypoint into the bundler. Expected failures come back as values (`BundleAnswer`). */
export class BundlerEntrypoint extends WorkerEntrypoint implements BundlerApi {
  bundle(request: BundleRequest): Promise<BundleAnswer> {
    return asCoded(() => bundleSource(request));
  }
}

export default {
  // Nothing is served over HTTP: the service binding is the only way in.
  fetch(): Response {
    return new Response("not found", { status: 404 });
  },
} satisfies ExportedHandler;
