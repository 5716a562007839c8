import { describe, expect, test } from "vitest";
import { connectItx } from "iterate/client";
import { target } from "../harness/os.ts";
import { newProject } from "../harness/projects.ts";
import { expectCode } from "iterate/stream/test-support";

// oxlint-disable typescript/no-explicit-any -- dynamic workers are dynamic by design

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
  test("a TypeScript worker is built, loaded, called with props, and reaches its context", { timeout: 120_000 }, async () => {
    const { projectId } = await newProject("workers");
    const { baseUrl, admin } = target();
    using itx: any = connectItx({ baseUrl, auth: admin, projectId });
    const worker = itx.workers.get({ source: { files }, props: { tenant: "acme" } });
    expect(await worker.hello("ada")).toBe("hello ada for acme");
    expect(await worker.where()).toBe("/");
    const child = itx.extend({ name: "w" });
    expect(await child.workers.get({ source: { files } }).where()).toBe("/itx/w");
  });

  test("a stateful worker is a facet of the context that keeps state under its key", { timeout: 120_000 }, async () => {
    const { projectId } = await newProject("workers-do");
    const { baseUrl, admin } = target();
    using itx: any = connectItx({ baseUrl, auth: admin, projectId });
    const ref = { source: { files }, durableObject: { className: "Counter", key: "counter-1" } };
    expect(await itx.workers.get(ref).increment()).toBe(1);
    expect(await itx.workers.get(ref).increment()).toBe(2);
    expect(await itx.workers.get({ ...ref, durableObject: { className: "Counter", key: "counter-2" } }).increment()).toBe(1);
  });

  test("a build error names the file and line; bad refs are INVALID_ARGUMENT", { timeout: 120_000 }, async () => {
    const { projectId } = await newProject("workers-bad");
    const { baseUrl, admin } = target();
    using itx: any = connectItx({ baseUrl, auth: admin, projectId });
    const broken = await expectCode(itx.workers.get({ source: { files: { "src/index.ts": "export default {\n  fetch() { return new Response(; }\n};" } } }).fetch("http://x/"), "INVALID_ARGUMENT");
    expect(broken.message).toMatch(/src\/index\.ts:2:/);
    for (const ref of [{}, { source: { files: {} } }, { source: { files: { "/abs.ts": "" } } }, { source: { files }, colour: 1 }, { source: { files }, durableObject: { className: "Counter" } }]) {
      await expectCode(itx.workers.get(ref).fetch("http://x/"), "INVALID_ARGUMENT", JSON.stringify(ref).slice(0, 60));
    }
  });
});
