import { newWebSocketRpcSession, type RpcStub } from "capnweb";
import { startLocalOs, type LocalOs } from "../../apps/os/scripts/local-os.ts";

/** The raw operations the OS's bench root offers (apps/os/src/bench/bench-root.ts). */
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
}

export interface BenchTarget {
  baseUrl: string;
  adminSecret: string;
  bench: RpcStub<BenchRoot>;
  close(): Promise<void>;
}

/**
 * Starts a local OS with the bench root enabled, or uses BASE_URL (whose OS must run with
 * ITERATE_BENCH=1) when given.
 */
export async function openTarget(): Promise<BenchTarget> {
  let os: LocalOs | undefined;
  let baseUrl = process.env.BASE_URL?.replace(/\/+$/, "");
  let adminSecret = process.env.ITERATE_ADMIN_SECRET ?? "";
  if (!baseUrl) {
    os = await startLocalOs({ vars: { ITERATE_BENCH: "1", EGRESS_ALLOW_PRIVATE_ADDRESSES: "1" } });
    baseUrl = os.baseUrl;
    adminSecret = os.adminSecret;
  }
  const bench = newWebSocketRpcSession<BenchRoot>(`${baseUrl.replace(/^http/, "ws")}/api/bench`);
  return {
    baseUrl,
    adminSecret,
    bench,
    async close() {
      bench[Symbol.dispose]();
      await os?.stop();
    },
  };
}
