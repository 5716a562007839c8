import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import { ensureContext } from "../itx/context-lifecycle.ts";
import { ItxRpcTarget } from "../itx/itx-rpc-target.ts";
import { noteMaterialsUsed, type MaterialScope } from "../egress/materials-in-use.ts";
import { scrubbedCall, scrubPatternsCacheSize } from "./scrubbed-call.ts";
import { LIMITS } from "../limits.ts";

// oxlint-disable typescript/no-explicit-any -- dynamic workers are dynamic by design

// The in-process road (no RUNNER: a deployment's shape) and durable workers' facets. The pipe is
// stood in for by `use`, a function the worker calls: it records the material as substituted
// for the worker's scope, as the pipe does when it sends a secret, and answers it, as an echoing
// server would. (e2e/suites/secret-scrub.test.ts covers the real pipe on both roads.)
const files = {
  "src/index.ts": `import { DurableObject, RpcTarget, WorkerEntrypoint } from "cloudflare:workers";
type Use = (material: string) => Promise<string>;
let kept: string | undefined;
class Vault extends RpcTarget {
  open(): string { return kept ?? "nothing kept"; }
}
export default class extends WorkerEntrypoint {
  async grab(use: Use, m: string): Promise<string> { return use(m); }
  echo(value: unknown): unknown { return value; }
  async shapes(use: Use, m: string): Promise<unknown> {
    const s = await use(m);
    return {
      s, [s]: "as a key", list: ["note " + s, 2], map: new Map([[s, s]]), set: new Set([s]),
      bytes: new TextEncoder().encode("bytes " + s), buffer: new TextEncoder().encode("buffer " + s).buffer,
      error: Object.assign(new Error("error " + s), { code: "NOT_FOUND" }), date: new Date(0), n: 1, none: null,
    };
  }
  async boom(use: Use, m: string): Promise<never> { throw Object.assign(new Error("[NOT_FOUND] leaked: " + (await use(m))), { code: "NOT_FOUND" }); }
  async keep(use: Use, m: string): Promise<string> { kept = await use(m); return "kept"; }
  recall(): string { return kept ?? "nothing kept"; }
  vault(): Vault { return new Vault(); }
  reader(): () => string { return () => kept ?? "nothing kept"; }
  get deep() { return { recall: () => kept ?? "nothing kept" }; }
  later(): ReadableStream {
    // Answers at once; its one chunk is written once something was kept (by a later call).
    return new ReadableStream({
      async pull(controller) {
        for (let i = 0; i < 200 && kept === undefined; i++) await new Promise((done) => setTimeout(done, 10));
        controller.enqueue(new TextEncoder().encode("late " + (kept ?? "nothing kept")));
        controller.close();
      },
    });
  }
  encoded(): Response { return new Response("zipped " + kept, { headers: { "content-encoding": "gzip" } }); }
  async fetch(request: Request): Promise<Response> {
    return new Response("body " + (kept ?? "nothing kept") + " for " + new URL(request.url).pathname, { statusText: "OK " + kept, headers: { "x-kept": kept ?? "none" } });
  }
}
export class Keeper extends DurableObject {
  async grab(use: Use, m: string): Promise<string> { return use(m); }
  async keep(use: Use, m: string): Promise<string> { await this.ctx.storage.put("m", await use(m)); return "kept"; }
  async give(): Promise<unknown> { return this.ctx.storage.get("m"); }
}`,
};

const MATERIAL = "sk-live-scrubbed-call-0123456789";
// A material of the longest length a secret may have.
const long = (tag: string, i: number) => `${tag}-${i}-`.padEnd(LIMITS.SECRET_MATERIAL_MAX_LENGTH, "y");

let counter = 0;
async function contextItx(): Promise<{ itx: ItxRpcTarget; scope: MaterialScope; use: (material: string) => Promise<string> }> {
  counter += 1;
  const projectId = `prj_scrubcall${Date.now()}${counter}`;
  await ensureContext(env, { projectId, path: "/", name: "test", parent: null, ancestors: [], caller: { principal: "tester", origin: "/", connectionId: "conn-1" } });
  const scope = { projectId, origin: "/" };
  const use = async (material: string) => {
    noteMaterialsUsed(scope, [material]);
    return material;
  };
  return { itx: new ItxRpcTarget({ env, principal: "tester", projectId, path: "/", origin: "/" }), scope, use };
}

async function worker(itx: ItxRpcTarget): Promise<any> {
  return itx.workers.get({ source: { files } });
}

describe("a dynamic worker in this process: what it answers passes the secret scrub", () => {
  test("material substituted during the call is [secret] in a result, at any depth and in every shape", { timeout: 120_000 }, async () => {
    const { itx, use } = await contextItx();
    const w = await worker(itx);
    expect(await w.grab(use, MATERIAL)).toBe("[secret]");
    const shapes = await w.shapes(use, MATERIAL);
    expect(shapes).toMatchObject({ s: "[secret]", "[secret]": "as a key", list: ["note [secret]", 2], n: 1, none: null });
    expect(Object.keys(shapes)).not.toContain(MATERIAL);
    expect([...shapes.map]).toEqual([["[secret]", "[secret]"]]);
    expect([...shapes.set]).toEqual(["[secret]"]);
    expect(new TextDecoder().decode(shapes.bytes)).toBe("bytes [secret]");
    expect(new TextDecoder().decode(shapes.buffer)).toBe("buffer [secret]");
    expect(shapes.error.message).toContain("error [secret]");
    expect(shapes.error.code).toBe("NOT_FOUND");
    expect(shapes.date).toEqual(new Date(0));
  });

  test("a thrown message is scrubbed and keeps its code", { timeout: 120_000 }, async () => {
    const { itx, use } = await contextItx();
    const error = await expectCode((await worker(itx)).boom(use, MATERIAL), "NOT_FOUND");
    expect(error.message).toContain("leaked: [secret]");
    expect(error.message).not.toContain(MATERIAL);
  });

  test("kept in a global by one call and returned by a later call that used none: [secret], through every road out", { timeout: 120_000 }, async () => {
    const { itx, use } = await contextItx();
    const w = await worker(itx);
    // Handed out before any material was used: later calls on them pass the scrub too.
    const [vault, reader, later] = [await w.vault(), await w.reader(), await w.later()];
    expect(await w.keep(use, MATERIAL)).toBe("kept");
    expect(await (await worker(itx)).recall()).toBe("[secret]");
    expect(await vault.open()).toBe("[secret]");
    expect(await reader()).toBe("[secret]");
    expect(await w.deep.recall()).toBe("[secret]");
    // A stream answered before the material was used, and written after.
    expect(await new Response(later).text()).toBe("late [secret]");
    const response: Response = await w.fetch("https://worker.invalid/path");
    expect(response.statusText).toBe("OK [secret]");
    expect(response.headers.get("x-kept")).toBe("[secret]");
    expect(await response.text()).toBe("body [secret] for /path");
  });

  test("a body in a content-encoding cannot be read: withheld (EGRESS_REFUSED) while material is in play, passed when none is", { timeout: 120_000 }, async () => {
    const clean = await contextItx();
    const untouched: Response = await (await worker(clean.itx)).encoded();
    expect(untouched.headers.get("content-encoding")).toBe("gzip");
    expect(await untouched.text()).toBe("zipped undefined");
    const { itx, use } = await contextItx();
    const w = await worker(itx);
    await w.keep(use, MATERIAL);
    const refused = await expectCode(w.encoded(), "EGRESS_REFUSED");
    expect((refused as { details?: unknown }).details).toEqual({ reason: "unscrubbable-result" });
  });

  test(`a call that used more than LIMITS.RUN_MATERIALS_MAX (${LIMITS.RUN_MATERIALS_MAX}) materials is withheld: LIMIT_EXCEEDED`, { timeout: 120_000 }, async () => {
    const { itx, scope } = await contextItx();
    const many = async (material: string) => {
      noteMaterialsUsed(scope, Array.from({ length: LIMITS.RUN_MATERIALS_MAX + 1 }, (_, i) => `${material}-${i}`));
      return material;
    };
    const error = await expectCode((await worker(itx)).grab(many, MATERIAL), "LIMIT_EXCEEDED");
    expect((error as { details?: unknown }).details).toEqual({ limit: "RUN_MATERIALS_MAX" });
  });

  test("a worker whose context used no material is answered as it answered, stubs and all", { timeout: 120_000 }, async () => {
    const { itx } = await contextItx();
    const w = await worker(itx);
    const value = { text: `${MATERIAL} [secret]`, list: [1, "two", { three: 3 }], bytes: new Uint8Array([1, 2, 3]) };
    expect(await w.echo(value)).toEqual(value);
    expect(await (await w.vault()).open()).toBe("nothing kept");
    const response: Response = await w.fetch("https://worker.invalid/x");
    expect(await response.text()).toBe("body nothing kept for /x");
  });
});

describe("a durable worker's facet: what it answers passes the scrub of the context it acts as", () => {
  test("material used during a call, and material it kept in its storage and gives back from a later call", { timeout: 120_000 }, async () => {
    const { itx, scope: root } = await contextItx();
    const child = await itx.extend({ name: "d" });
    const scope = { projectId: root.projectId, origin: "/itx/d" };
    const use = async (material: string) => {
      noteMaterialsUsed(scope, [material]);
      return material;
    };
    const ref = { source: { files }, durableObject: { className: "Keeper", key: "keeper" } };
    const keeper = async () => (await child.workers.get(ref)) as any;
    expect(await (await keeper()).grab(use, MATERIAL)).toBe("[secret]");
    expect(await (await keeper()).keep(use, MATERIAL)).toBe("kept");
    expect(await (await keeper()).give()).toBe("[secret]");
  });
});

// One call in a fresh scope that used `count` of the longest materials, checked for its scrub.
async function callUsing(count: number): Promise<void> {
  const scope = { projectId: `p-${crypto.randomUUID()}`, origin: "/" };
  const materials = Array.from({ length: count }, (_, i) => long(scope.projectId, i));
  noteMaterialsUsed(scope, materials);
  expect(await scrubbedCall(scope, () => `kept ${materials[0]}`)).toBe("kept [secret]");
}

describe("the scrub's patterns", () => {
  test(`are kept for the sets of materials used last, at most LIMITS.SCRUB_PATTERNS_CACHE_MAX_BYTES (${LIMITS.SCRUB_PATTERNS_CACHE_MAX_BYTES}); a larger set is built for its call only`, { timeout: 120_000 }, async () => {
    await callUsing(1);
    const one = scrubPatternsCacheSize();
    expect(one.sets).toBeGreaterThan(0);
    // A set of every material's dozens of spellings, past the bound: used, not kept.
    await callUsing(LIMITS.RECENT_MATERIALS_MAX);
    expect(scrubPatternsCacheSize()).toEqual(one);
    for (let i = 0; i < 12; i++) await callUsing(4);
    expect(scrubPatternsCacheSize().bytes).toBeLessThanOrEqual(LIMITS.SCRUB_PATTERNS_CACHE_MAX_BYTES);
    expect(scrubPatternsCacheSize().sets).toBeLessThan(12);
  });
});

// A byte stream the test writes chunk by chunk, and when it likes.
function fedStream(): { stream: ReadableStream<Uint8Array>; feed(text: string): void; end(): void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return { stream, feed: (text) => controller.enqueue(new TextEncoder().encode(text)), end: () => controller.close() };
}

const scope = () => ({ projectId: `p-${crypto.randomUUID()}`, origin: "/" });
const read = async (stream: unknown) => new Response(stream as ReadableStream).text();

describe("a stream answered by loaded code is scrubbed as it streams", () => {

  test("material split across chunks at every byte is found", async () => {
    const at = scope();
    noteMaterialsUsed(at, [MATERIAL]);
    const { stream, feed, end } = fedStream();
    const scrubbed = read(await scrubbedCall(at, () => stream));
    feed("before ");
    for (const char of MATERIAL) feed(char);
    feed(" after");
    end();
    expect(await scrubbed).toBe("before [secret] after");
  });

  test("material first used after the stream was answered is scrubbed from the chunks after it, held-back bytes included", async () => {
    const at = scope();
    noteMaterialsUsed(at, ["sk-first-material-in-play"]);
    const { stream, feed, end } = fedStream();
    const scrubbed = read(await scrubbedCall(at, () => stream));
    // The first half arrives while only the other material is in play: held back (it could begin
    // a spelling of that one), then searched again once the second material comes into play.
    feed(`x ${MATERIAL.slice(0, 10)}`);
    await new Promise((done) => setTimeout(done, 10));
    noteMaterialsUsed(at, [MATERIAL]);
    feed(MATERIAL.slice(10));
    feed(" and again " + MATERIAL);
    end();
    expect(await scrubbed).toBe("x [secret] and again [secret]");
  });

  test("a scope that had used no material when the stream was answered: chunks pass untouched until it does", async () => {
    const at = scope();
    const { stream, feed, end } = fedStream();
    const scrubbed = read(await scrubbedCall(at, () => stream));
    feed("plain [secret] text, ");
    await new Promise((done) => setTimeout(done, 10));
    noteMaterialsUsed(at, [MATERIAL]);
    feed(`then ${MATERIAL}`);
    end();
    expect(await scrubbed).toBe("plain [secret] text, then [secret]");
  });
});
