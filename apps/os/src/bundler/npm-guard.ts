// The bundler's road to npm. @cloudflare/worker-bundler installs a source's `package.json`
// dependencies with the global `fetch` and inflates tarballs with the global
// `DecompressionStream`. Both are replaced once, here, by versions that charge the build they
// run for (found through AsyncLocalStorage, since builds run concurrently in one isolate): only
// the npm registry is reachable, and packages, downloaded bytes and unpacked bytes are bounded
// per build. Untrusted source picks the packages, so without this one `package.json` could make
// the bundler (which shares its workerd process with the OS locally) download and inflate
// without bound. Every request is charged, whatever its URL: the library puts dependency names
// into URLs unchecked.
import { AsyncLocalStorage } from "node:async_hooks";
import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails, type LimitName } from "../limits.ts";

/** The only origin a build may fetch from (the library's default registry and its tarballs). */
export const NPM_REGISTRY_ORIGIN = "https://registry.npmjs.org";

type NpmLimitName = "BUNDLE_NPM_PACKAGES_MAX" | "BUNDLE_NPM_DOWNLOAD_MAX_BYTES" | "BUNDLE_NPM_UNPACKED_MAX_BYTES";

/** What one build has taken from npm, and the first limit it crossed. */
export class NpmBudget {
  packages = 0;
  /** Tarball requests already paid for: each package looked up pays for one. */
  tarballs = 0;
  downloadedBytes = 0;
  unpackedBytes = 0;
  /** The first limit crossed; every later fetch of the build is refused. */
  exceeded: NpmLimitName | undefined;
  readonly limits: Record<NpmLimitName, number>;

  constructor(limits: Partial<Record<NpmLimitName, number>> = {}) {
    this.limits = {
      BUNDLE_NPM_PACKAGES_MAX: LIMITS.BUNDLE_NPM_PACKAGES_MAX,
      BUNDLE_NPM_DOWNLOAD_MAX_BYTES: LIMITS.BUNDLE_NPM_DOWNLOAD_MAX_BYTES,
      BUNDLE_NPM_UNPACKED_MAX_BYTES: LIMITS.BUNDLE_NPM_UNPACKED_MAX_BYTES,
      ...limits,
    };
  }

  /** Counts `amount` against `limit`; false (and remembered) once past it. */
  charge(limit: NpmLimitName, amount: number): boolean {
    if (this.exceeded) return false;
    const field = limit === "BUNDLE_NPM_PACKAGES_MAX" ? "packages" : limit === "BUNDLE_NPM_DOWNLOAD_MAX_BYTES" ? "downloadedBytes" : "unpackedBytes";
    this[field] += amount;
    if (this[field] > this.limits[limit]) this.exceeded = limit;
    return this.exceeded === undefined;
  }

  /** RESOURCE_EXHAUSTED naming the limit crossed, if one was. */
  check(): void {
    if (this.exceeded === undefined) return;
    const limit: LimitName = this.exceeded;
    throw new ItxError("RESOURCE_EXHAUSTED", `the worker's npm dependencies cross ${limit} (${this.limits[this.exceeded]})`, { details: limitDetails(limit) });
  }
}

const current = new AsyncLocalStorage<NpmBudget>();
let installed = false;

/** Runs `build` with `budget` charged for every npm fetch and inflation it makes. */
export function withNpmBudget<T>(budget: NpmBudget, build: () => Promise<T>): Promise<T> {
  installNpmGuards();
  return current.run(budget, build);
}

/** Replaces the global fetch and DecompressionStream of this isolate (once). */
function installNpmGuards(): void {
  if (installed) return;
  installed = true;
  const scope = globalThis as unknown as { fetch: typeof fetch; DecompressionStream: typeof DecompressionStream };
  const inner = scope.fetch.bind(globalThis);
  scope.fetch = (input: RequestInfo | URL, init?: RequestInit) => guardedFetch(inner, current.getStore(), input, init);
  const Native = scope.DecompressionStream;
  scope.DecompressionStream = class extends Native {
    constructor(format: ConstructorParameters<typeof DecompressionStream>[0]) {
      super(format);
      const budget = current.getStore();
      if (budget === undefined) return;
      // The library reads `readable`; hand it one that stops at the unpacked budget.
      const counted = this.readable.pipeThrough(countingStream(budget, "BUNDLE_NPM_UNPACKED_MAX_BYTES"));
      Object.defineProperty(this, "readable", { value: counted });
    }
  };
}

/**
 * The build's fetch: the npm registry only, every request and byte charged. A request counts as a
 * package, except a tarball (`/-/`) that a package looked up earlier paid for, so a build makes at
 * most two requests per package it may install, and a budget of no packages (npm off) none.
 * Exported for tests.
 */
export async function guardedFetch(inner: typeof fetch, budget: NpmBudget | undefined, input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  // Outside a build the bundler fetches nothing itself; the workerd tests share this isolate.
  if (budget === undefined) return inner(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.origin !== NPM_REGISTRY_ORIGIN) throw new ItxError("PERMISSION_DENIED", `a build may fetch only from ${NPM_REGISTRY_ORIGIN}, not ${url.origin}`);
  if (budget.exceeded) throw overBudget(budget);
  // The path alone cannot tell a tarball: `"x/-/1": "1"` in a package.json asks for `/x/-/1`.
  const tarballPath = url.pathname.includes("/-/");
  if (tarballPath && budget.tarballs > 0) budget.tarballs -= 1;
  else if (!budget.charge("BUNDLE_NPM_PACKAGES_MAX", 1)) throw overBudget(budget);
  else if (!tarballPath) budget.tarballs += 1;
  const response = await inner(url.toString(), { ...init, redirect: "error" });
  if (response.body === null) return response;
  // A declared length past what is left is refused before a byte is read.
  const declared = Number(response.headers.get("content-length") ?? 0);
  if (declared > budget.limits.BUNDLE_NPM_DOWNLOAD_MAX_BYTES - budget.downloadedBytes) {
    await response.body.cancel();
    budget.charge("BUNDLE_NPM_DOWNLOAD_MAX_BYTES", declared);
    throw overBudget(budget);
  }
  const body = response.body.pipeThrough(countingStream(budget, "BUNDLE_NPM_DOWNLOAD_MAX_BYTES"));
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** Passes bytes through, charging them; errors the stream once the budget is crossed. */
export function countingStream(budget: NpmBudget, limit: NpmLimitName): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream({
    transform(chunk, controller) {
      if (!budget.charge(limit, chunk.byteLength)) controller.error(overBudget(budget));
      else controller.enqueue(chunk);
    },
  });
}

function overBudget(budget: NpmBudget): ItxError {
  const limit = budget.exceeded ?? "BUNDLE_NPM_DOWNLOAD_MAX_BYTES";
  return new ItxError("RESOURCE_EXHAUSTED", `the build crossed ${limit}`, { details: limitDetails(limit) });
}
