// Node-only: gives the benchmarks a socket that serves the OS Worker itself, with no local
// plumbing in front (decision 0027). Behind even the OS's own workerd socket (decision 0025),
// Miniflare runs two JavaScript workers before ours on every request: its entry worker (request
// re-wrapping, encodings, pretty errors) and, because wrangler.jsonc has `assets` with
// `run_worker_first`, the assets router. A deployment has neither. Miniflare can open a socket
// straight onto one worker (`unsafeDirectSockets`), but `wrangler dev` has no flag for it, so the
// bench's `wrangler dev` is started with this module preloaded (`node --import`): it wraps the
// `miniflare` module wrangler loads and adds that socket to the options wrangler builds. Only
// `startLocalOs({ bench: true })` preloads it; nothing else in `pnpm dev`, the e2e harness or a
// deployment changes.
import { Module } from "node:module";

/** The environment variable the preload reads: `<worker name>@<host>:<port>`. */
export const WORKER_SOCKET_ENV = "ITERATE_WORKER_SOCKET";

export interface WorkerSocket {
  /** The Worker the socket serves (its `name` in the wrangler config). */
  worker: string;
  host: string;
  port: number;
}

/** `iterate-os@127.0.0.1:8788` -> its parts; undefined when malformed. */
export function parseWorkerSocket(value: string | undefined): WorkerSocket | undefined {
  const match = /^([^@]+)@([^:]+):(\d+)$/.exec(value ?? "");
  if (!match?.[1] || !match[2] || !match[3]) return undefined;
  const port = Number(match[3]);
  return port > 0 && port < 65_536 ? { worker: match[1], host: match[2], port } : undefined;
}

/** The value of WORKER_SOCKET_ENV for `socket`. */
export function formatWorkerSocket(socket: WorkerSocket): string {
  return `${socket.worker}@${socket.host}:${socket.port}`;
}

interface MiniflareWorkerOptions {
  name?: string;
  assets?: unknown;
  unsafeDirectSockets?: { host?: string; port?: number; serviceName?: string; entrypoint?: string }[];
  [key: string]: unknown;
}

/**
 * Miniflare (v4-style) options with a direct socket onto `socket.worker`'s default entrypoint, or
 * the options unchanged when that Worker is not among them (wrangler's proxy instance, another
 * Worker). Miniflare points a direct socket onto the default entrypoint of a Worker with assets
 * at its assets proxy, not at the Worker; so the socket is declared on another Worker of the same
 * instance that has no assets (the bundler Worker locally), naming ours as its `serviceName`,
 * which Miniflare serves as the Worker's own service. With no such Worker, the options are
 * unchanged and the caller falls back (decision 0025's socket).
 */
export function withWorkerSocket<T extends { workers?: MiniflareWorkerOptions[] }>(options: T, socket: WorkerSocket): T {
  const workers = options.workers;
  if (!workers?.some((worker) => worker.name === socket.worker)) return options;
  const holder = workers.findIndex((worker) => worker.assets === undefined);
  if (holder === -1) return options;
  return {
    ...options,
    workers: workers.map((worker, index) =>
      index === holder
        ? {
            ...worker,
            unsafeDirectSockets: [...(worker.unsafeDirectSockets ?? []), { host: socket.host, port: socket.port, serviceName: socket.worker }],
          }
        : worker,
    ),
  };
}

type Load = (request: string, parent: unknown, isMain: boolean) => unknown;

/**
 * Wraps every later `require("miniflare")` so that the options passed through
 * `convertV4MiniflareOptions` (the one road wrangler's Miniflare instances take) get the socket.
 * Returns a function that undoes it.
 */
export function installWorkerSocket(socket: WorkerSocket): () => void {
  const moduleInternals = Module as unknown as { _load: Load };
  const original = moduleInternals._load;
  const wrapped = new WeakMap<object, object>();
  moduleInternals._load = function load(request, parent, isMain) {
    const loaded = original.call(this, request, parent, isMain);
    if (request !== "miniflare" || typeof loaded !== "object" || loaded === null) return loaded;
    const real = loaded as { convertV4MiniflareOptions?: (options: { workers?: MiniflareWorkerOptions[] }) => unknown };
    const convert = real.convertV4MiniflareOptions;
    if (typeof convert !== "function") return loaded;
    let wrapper = wrapped.get(loaded);
    if (wrapper === undefined) {
      // The module's exports are getters that cannot be redefined: inherit them, override one.
      wrapper = Object.create(loaded, {
        convertV4MiniflareOptions: { value: (options: { workers?: MiniflareWorkerOptions[] }) => convert(withWorkerSocket(options, socket)), enumerable: true },
      }) as object;
      wrapped.set(loaded, wrapper);
    }
    return wrapper;
  };
  return () => {
    moduleInternals._load = original;
  };
}
