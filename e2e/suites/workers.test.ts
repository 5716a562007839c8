import { describe, expect } from "vitest";
import type { RpcStub } from "capnweb";
import { expectCode } from "iterate/stream/test-support";
import type { WorkerRef } from "iterate/types";
import { test } from "../harness/fixtures.ts";

/** What the worker below exposes: `itx.workers.get` cannot know a loaded worker's methods. */
interface Main {
  hello(name: string): string;
  where(): string;
  increment(): number;
  fetch(url: string): Response;
}
const loaded = (stub: unknown) => stub as RpcStub<Main>;

const files = {
  "src/index.ts": `import { WorkerEntrypoint, DurableObject } from "cloudflare:workers";
import { greet, type Who } from "./greet";
interface Env { ITX: { get(): any } }
export default class Main extends WorkerEntrypoint<Env, { tenant?: string }> {
  hello(name: string): string { const who: Who = { name }; return greet(who) + " for " + (this.ctx.props.tenant ?? "nobody"); }
  async where(): Promise<string> { return (await this.env.ITX.get().whoami()).path; }
}
export class Counter extends DurableObject {
  increment(): number {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS c(n INTEGER)");
    this.ctx.storage.sql.exec("INSERT INTO c VALUES (1)");
    return this.ctx.storage.sql.exec("SELECT count(*) AS n FROM c").one().n as number;
  }
}`,
  "src/greet.ts": `export interface Who { name: string }
export function greet(who: Who): string { return "hello " + who.name; }`,
};

describe("dynamic workers", () => {
  test("a TypeScript worker is built, loaded, called with props, and reaches its context", { timeout: 120_000 }, async ({ project: { itx } }) => {
    const worker = loaded(itx.workers.get({ source: { files }, props: { tenant: "acme" } }));
    expect(await worker.hello("ada")).toBe("hello ada for acme");
    expect(await worker.where()).toBe("/");
    const child = itx.extend({ name: "w" });
    expect(await loaded(child.workers.get({ source: { files } })).where()).toBe("/itx/w");
  });

  test("a stateful worker is a facet of the context that keeps state under its key", { timeout: 120_000 }, async ({ project: { itx } }) => {
    const ref = { source: { files }, durableObject: { className: "Counter", key: "counter-1" } };
    expect(await loaded(itx.workers.get(ref)).increment()).toBe(1);
    expect(await loaded(itx.workers.get(ref)).increment()).toBe(2);
    expect(await loaded(itx.workers.get({ ...ref, durableObject: { className: "Counter", key: "counter-2" } })).increment()).toBe(1);
  });

  test("a build error names the file and line; bad refs are INVALID_ARGUMENT", { timeout: 120_000 }, async ({ project: { itx } }) => {
    const broken = await expectCode(loaded(itx.workers.get({ source: { files: { "src/index.ts": "export default {\n  fetch() { return new Response(; }\n};" } } })).fetch("http://x/"), "INVALID_ARGUMENT");
    expect(broken.message).toMatch(/src\/index\.ts:2:/);
    for (const ref of [{}, { source: { files: {} } }, { source: { files: { "/abs.ts": "" } } }, { source: { files }, colour: 1 }, { source: { files }, durableObject: { className: "Counter" } }]) {
      // Deliberately malformed refs: the contract's type would refuse them at compile time.
      await expectCode(loaded(itx.workers.get(ref as WorkerRef)).fetch("http://x/"), "INVALID_ARGUMENT", JSON.stringify(ref).slice(0, 60));
    }
  });
});
