import type { TestProject } from "vitest/node";
import { freePort, startLocalOs, type LocalOs } from "@iterate/os/local-os";
import { readyTimeoutMs } from "./ready-timeout.ts";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    adminSecret: string;
    /** The local OS's log, for scans; empty when the suites run against BASE_URL. */
    logPath: string;
    /** The loopback port the OS's MCP_EXA_URL names (`itx.mcp.exa`); 0 when the suites run against BASE_URL. */
    exaPort: number;
    /** The local OS's state folder (its runner's is inside it); empty when the suites run against BASE_URL. */
    stateDir: string;
  }
}

/** How long the shared OS may take to answer when `E2E_READY_TIMEOUT_MS` is unset. */
const SHARED_READY_TIMEOUT_MS = 180_000;

let os: LocalOs | undefined;

export async function setup(project: TestProject): Promise<void> {
  const given = process.env.BASE_URL;
  if (given !== undefined && given !== "") {
    const adminSecret = process.env.ITERATE_ADMIN_SECRET;
    if (!adminSecret) throw new Error("BASE_URL is set: set ITERATE_ADMIN_SECRET to that OS's admin secret too");
    project.provide("baseUrl", given.replace(/\/+$/, ""));
    project.provide("adminSecret", adminSecret);
    project.provide("logPath", "");
    project.provide("stateDir", "");
    // That OS's MCP_EXA_URL port, when it names one on loopback (else the exa case is skipped).
    project.provide("exaPort", Number(process.env.MCP_EXA_PORT ?? 0) || 0);
    return;
  }
  // Loopback only: the suites run servers on 127.0.0.1, and every other private address stays refused.
  // A loaded machine (several suites starting OSes at once) can take well over a minute to start
  // one: the harness waits three minutes, or what E2E_READY_TIMEOUT_MS says.
  // Durable Streams live waits of 2 s (20 s by default) keep the conformance suite's timeouts short.
  // itx.mcp.exa reaches a port on loopback where the MCP suite starts a stand-in for Exa's server.
  const exaPort = await freePort();
  os = await startLocalOs({
    vars: { EGRESS_ALLOW_PRIVATE_ADDRESSES: "loopback", STREAMS_LIVE_WAIT_MS: "2000", MCP_EXA_URL: `http://127.0.0.1:${exaPort}/mcp` },
    readyTimeoutMs: readyTimeoutMs(SHARED_READY_TIMEOUT_MS),
    // E2E_IN_PROCESS_LOADER=1: untrusted code in the OS's own Loader, as in a deployment (no runner).
    inProcessLoader: process.env.E2E_IN_PROCESS_LOADER === "1",
  });
  project.provide("exaPort", exaPort);
  project.provide("baseUrl", os.baseUrl);
  project.provide("adminSecret", os.adminSecret);
  project.provide("logPath", os.logPath);
  project.provide("stateDir", os.persistTo);
}

export async function teardown(): Promise<void> {
  await os?.stop();
}
