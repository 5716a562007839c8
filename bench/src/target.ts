import { newWebSocketRpcSession, type RpcStub } from "capnweb";
import { connectItx } from "iterate/client";
import { startLocalOs, type LocalOs } from "@iterate/os/local-os";

/** The raw operations the bench worker's root offers (apps/os/src/bench/bench-root.ts). */
export interface BenchRoot {
  ping(): null;
  doNoop(name: string): null;
  doInsertOne(name: string): number;
  doInsertMany(name: string, count: number): number;
  loaderCall(id: string): { status: number; ms: number };
  fillJournal(name: string, count: number): number;
  keepCallback(name: string, callback: (value: number) => number): void;
  callKeptCallback(name: string, value: number): number;
  replayJournal(name: string): { offset: number; count: number };
  directFetch(url: string): number;
  timedDirectFetch(url: string): number;
  pipeFetch(projectId: string, url: string): number;
  itxFetch(projectId: string, url: string): number;
}

export interface BenchTarget {
  baseUrl: string;
  /**
   * The OS at its own workerd socket, without wrangler dev's proxy (decision 0025); absent with
   * BASE_URL or when it could not be found.
   */
  workerdUrl?: string;
  /**
   * The OS Worker at a socket of its own, without Miniflare's entry worker and assets router in
   * front either (decision 0027); absent with BASE_URL or when it could not be found.
   */
  workerUrl?: string;
  adminSecret: string;
  bench: RpcStub<BenchRoot>;
  close(): Promise<void>;
}

/**
 * Starts the bench worker (the local OS plus the benchmark root at /api/bench), or uses BASE_URL
 * when given (which must be a bench worker: `startLocalOs({ bench: true })`).
 */
export async function openTarget(): Promise<BenchTarget> {
  let os: LocalOs | undefined;
  let baseUrl = process.env.BASE_URL?.replace(/\/+$/, "");
  let adminSecret = process.env.ITERATE_ADMIN_SECRET ?? "";
  let workerdUrl: string | undefined;
  let workerUrl: string | undefined;
  if (!baseUrl) {
    // A machine shared with other work may take minutes to start an OS: five by default, or BENCH_READY_TIMEOUT_MS.
    const readyTimeoutMs = Number(process.env.BENCH_READY_TIMEOUT_MS) || 300_000;
    os = await startLocalOs({ bench: true, vars: { EGRESS_ALLOW_PRIVATE_ADDRESSES: "1" }, readyTimeoutMs });
    baseUrl = os.baseUrl;
    adminSecret = os.adminSecret;
    workerdUrl = os.workerdUrl;
    workerUrl = os.workerUrl;
  }
  const bench = newWebSocketRpcSession<BenchRoot>(`${baseUrl.replace(/^http/, "ws")}/api/bench`);
  return {
    baseUrl,
    ...(workerdUrl ? { workerdUrl } : {}),
    ...(workerUrl ? { workerUrl } : {}),
    adminSecret,
    bench,
    async close() {
      bench[Symbol.dispose]();
      await os?.stop();
    },
  };
}

/**
 * A fresh project and an admin itx on its root context, over a Cap'n Web session of its own at
 * `url` (the public port unless a group measures elsewhere: `measuredAt`).
 * Dispose the handle to close the session.
 */
// oxlint-disable-next-line typescript/no-explicit-any -- capability paths are dynamic by design
export async function openProject(target: BenchTarget, prefix: string, url: string = target.baseUrl): Promise<{ projectId: string; itx: any }> {
  const auth = { type: "admin-secret" as const, secret: target.adminSecret };
  // oxlint-disable-next-line typescript/no-explicit-any -- as above
  const session: any = connectItx({ baseUrl: url, auth });
  try {
    const slug = `${prefix}-${Date.now().toString(36)}`;
    const { projectId } = await session.projects.create({ slug }).whoami();
    return { projectId, itx: connectItx({ baseUrl: url, auth, projectId }) };
  } finally {
    session[Symbol.dispose]();
  }
}

/**
 * The bench root at the address a group measures at (`measuredAt`), for floors interleaved with
 * the group's calls on the same road: the run's own root when that is the public port, else a
 * session of its own (dispose it when done).
 */
export function benchRootAt(target: BenchTarget, url: string): { bench: RpcStub<BenchRoot>; dispose(): void } {
  if (url === target.baseUrl) return { bench: target.bench, dispose: () => undefined };
  const bench = newWebSocketRpcSession<BenchRoot>(`${url.replace(/^http/, "ws")}/api/bench`);
  return { bench, dispose: () => bench[Symbol.dispose]() };
}

export interface Layer {
  /** The series' name after `via_`. */
  name: string;
  url: string;
  /** What a request through it passes before the OS Worker. */
  inFront: string;
}

/**
 * Where our side of the group is measured (the most direct socket the run has) and the layers of
 * local plumbing it bypasses, outermost last.
 */
export function measuredAt(target: Pick<BenchTarget, "baseUrl" | "workerdUrl" | "workerUrl">): { url: string; description: string; bypassed: Layer[] } {
  const entry: Layer | undefined = target.workerdUrl
    ? { name: "miniflare_entry", url: target.workerdUrl, inFront: "Miniflare's entry worker and the assets router" }
    : undefined;
  const proxy: Layer = { name: "wrangler_proxy", url: target.baseUrl, inFront: "wrangler dev's proxy, Miniflare's entry worker and the assets router" };
  if (target.workerUrl) {
    return { url: target.workerUrl, description: "the OS Worker's own socket (decision 0027)", bypassed: [...(entry ? [entry] : []), proxy] };
  }
  if (target.workerdUrl) {
    return {
      url: target.workerdUrl,
      description: "its own workerd socket, behind Miniflare's entry worker and the assets router (decision 0025): no socket onto the Worker itself was found (decision 0027)",
      bypassed: [proxy],
    };
  }
  return { url: target.baseUrl, description: "wrangler dev's public port: neither the Worker's socket (0027) nor workerd's (0025) was found (BASE_URL given, or not Linux)", bypassed: [] };
}
