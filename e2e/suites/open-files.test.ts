import { describe, expect, inject } from "vitest";
import type { RpcStub } from "capnweb";
import { test } from "../harness/fixtures.ts";
import { openFilesOf } from "../harness/open-files.ts";

// Every call into untrusted code crosses into the runner's process. Each used to keep its
// connection (one descriptor in each process) until the request that made it ended, and a Cap'n
// Web connection or a Durable Object is one request that lives long: about 10,000 worker calls over
// one connection exhausted the OS's descriptors, for every project at once. These cases make
// CALLS calls on each road and allow far fewer new descriptors than calls.

const CALLS = 400;
const GROWTH_MAX = 120;

const files = {
  "index.ts": `import { WorkerEntrypoint, DurableObject } from "cloudflare:workers";
export default class Pinger extends WorkerEntrypoint { ping(n: number): number { return n + 1; } }
export class Tally extends DurableObject { ping(n: number): number { return n + 1; } }`,
};

interface Pinger {
  ping(n: number): number;
}

const stateDir = inject("stateDir");

// How many descriptors the OS's processes opened over `calls`, and kept.
async function growthOver(calls: () => Promise<void>): Promise<number> {
  const before = openFilesOf(stateDir);
  expect(before.processes).toBeGreaterThan(0);
  await calls();
  return openFilesOf(stateDir).descriptors - before.descriptors;
}

// Counted only against a local OS whose state folder is known, on Linux.
describe.runIf(stateDir !== "" && process.platform === "linux")("calls into untrusted code keep no connection each", () => {
  test("calls on a stateless worker over one connection", { timeout: 120_000 }, async ({ project: { itx } }) => {
    const worker = itx.workers.get({ source: { files } }) as unknown as RpcStub<Pinger>;
    expect(await worker.ping(0)).toBe(1);
    const growth = await growthOver(async () => {
      for (let n = 1; n <= CALLS; n++) expect(await worker.ping(n)).toBe(n + 1);
    });
    expect(growth).toBeLessThan(GROWTH_MAX);
  });

  test("calls on a durable worker, which its context's object makes", { timeout: 120_000 }, async ({ project: { itx } }) => {
    const worker = itx.workers.get({ source: { files }, durableObject: { className: "Tally", key: "t" } }) as unknown as RpcStub<Pinger>;
    expect(await worker.ping(0)).toBe(1);
    const growth = await growthOver(async () => {
      for (let n = 1; n <= CALLS; n++) expect(await worker.ping(n)).toBe(n + 1);
    });
    expect(growth).toBeLessThan(GROWTH_MAX);
  });

  test("calls a script makes on a worker in one run", { timeout: 120_000 }, async ({ project: { itx } }) => {
    const script = `async (itx) => {
      const worker = itx.workers.get({ source: { files: ${JSON.stringify(files)} } });
      let sum = 0;
      for (let n = 0; n < ${CALLS}; n++) sum += await worker.ping(n);
      return sum;
    }`;
    expect(await itx.run(script)).toBe((CALLS * (CALLS + 1)) / 2);
    const growth = await growthOver(async () => {
      expect(await itx.run(script)).toBe((CALLS * (CALLS + 1)) / 2);
    });
    expect(growth).toBeLessThan(GROWTH_MAX);
  });
});
