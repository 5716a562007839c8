// Runs in the bundler Worker only (wrangler.bundler.jsonc): turns untrusted source into a bundle.
// Everything it is given is checked here again, whoever sent it: this Worker holds no secret and
// no binding, so the worst input can only cost this Worker its own CPU and memory.
import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";
import { parseWorkerSource } from "../worker-loader/worker-source.ts";
import type { Bundle, BundleRequest } from "./bundler-protocol.ts";
import { NpmBudget, withNpmBudget } from "./npm-guard.ts";

/**
 * Bundles `request` with @cloudflare/worker-bundler (esbuild in wasm). Throws INVALID_ARGUMENT
 * for input that crosses a limit or does not build (naming file, line and column), and
 * RESOURCE_EXHAUSTED for a bundle bigger than BUNDLE_OUTPUT_MAX_CHARS or npm dependencies past
 * their limits (`budget`, see npm-guard.ts; tests pass smaller ones). With `request.npm` false no
 * package may be fetched at all: a build that tries is INVALID_ARGUMENT (`reason: "npm-off"`).
 */
export async function bundleSource(request: BundleRequest, budget: NpmBudget = new NpmBudget()): Promise<Bundle> {
  if (typeof request !== "object" || request === null) throw new ItxError("INVALID_ARGUMENT", "a bundle request is { files, entryPoint?, virtualModules, npm? }");
  const { virtualModules, npm: allowed, ...rest } = request;
  if (allowed !== undefined && typeof allowed !== "boolean") throw new ItxError("INVALID_ARGUMENT", "npm is true or false");
  // Off: the guard refuses the first package, before any fetch (a budget of none).
  const npm = allowed === false ? new NpmBudget({ BUNDLE_NPM_PACKAGES_MAX: 0 }) : budget;
  const checkNpm = () => {
    if (allowed === false && npm.exceeded !== undefined) {
      throw new ItxError("INVALID_ARGUMENT", "this deployment installs no npm packages (BUNDLER_NPM is off): include the dependency's code among the files instead", {
        details: { reason: "npm-off" },
      });
    }
    npm.check();
  };
  const source = parseWorkerSource(rest);
  const modules = parseVirtualModules(virtualModules);
  const { createWorker } = await import("@cloudflare/worker-bundler");
  let built: Awaited<ReturnType<typeof createWorker>>;
  try {
    built = await withNpmBudget(npm, () =>
      createWorker({
        files: source.files,
        ...(source.entryPoint ? { entryPoint: source.entryPoint } : {}),
        bundle: true,
        virtualModules: modules,
      }),
    );
  } catch (error) {
    checkNpm();
    throw new ItxError("INVALID_ARGUMENT", `the worker did not build: ${describeBuildError(error)}`, { details: { reason: "build-failed" } });
  }
  // The library turns a refused install into a warning; the limit it crossed is the answer.
  checkNpm();
  const out: Record<string, string> = {};
  let chars = built.mainModule.length;
  for (const [name, module] of Object.entries(built.modules)) {
    out[name] = typeof module === "string" ? module : JSON.stringify(module);
    chars += name.length + out[name].length;
    // Checked as it grows: a bundle past the bound is dropped before it is all copied.
    if (chars > LIMITS.BUNDLE_OUTPUT_MAX_CHARS) {
      throw new ItxError("RESOURCE_EXHAUSTED", `the bundle is bigger than ${LIMITS.BUNDLE_OUTPUT_MAX_CHARS} characters`, { details: limitDetails("BUNDLE_OUTPUT_MAX_CHARS") });
    }
  }
  return { mainModule: built.mainModule, modules: out };
}

function parseVirtualModules(value: unknown): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ItxError("INVALID_ARGUMENT", "virtualModules maps specifiers to code");
  const entries = Object.entries(value);
  let chars = 0;
  for (const [specifier, code] of entries) {
    if (typeof code !== "string") throw new ItxError("INVALID_ARGUMENT", `virtualModules[${JSON.stringify(specifier)}] must be a string`);
    chars += specifier.length + code.length;
  }
  if (entries.length > LIMITS.WORKER_FILES_MAX || chars > LIMITS.WORKER_SOURCE_MAX_BYTES) {
    throw new ItxError("INVALID_ARGUMENT", `virtualModules are at most ${LIMITS.WORKER_FILES_MAX} modules of ${LIMITS.WORKER_SOURCE_MAX_BYTES} bytes`, {
      details: limitDetails(entries.length > LIMITS.WORKER_FILES_MAX ? "WORKER_FILES_MAX" : "WORKER_SOURCE_MAX_BYTES"),
    });
  }
  return value as Record<string, string>;
}

// esbuild reports `file:line:column: ERROR: text`; keep that, drop the noise around it.
function describeBuildError(error: unknown): string {
  const errors = (error as { errors?: Array<{ text: string; location?: { file: string; line: number; column: number } }> }).errors;
  if (Array.isArray(errors) && errors.length > 0) {
    return errors
      .slice(0, 5)
      .map(({ text, location }) => (location ? `${location.file}:${location.line}:${location.column}: ${text}` : text))
      .join("; ")
      .slice(0, 2_000);
  }
  return (error instanceof Error ? error.message : String(error)).slice(0, 2_000);
}
