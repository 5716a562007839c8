import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import type { Handle } from "iterate/client";
import { expectCode } from "iterate/stream/test-support";
import type { ProjectRoot, StreamEvent } from "iterate/types";
import { projectItx } from "../harness/projects.ts";
import { REFLECT_FORMS, startReflectServer, type ReflectForm } from "../harness/reflect-server.ts";

// Two materials: a plain token, and one whose escaped and encoded spellings differ from it. The
// pipe fills secrets into headers only, as printable ASCII (non-ASCII spellings: secret-scrub.test.ts
// in apps/os).
const PLAIN = `sk-live-${crypto.randomUUID()}`;
const FANCY = `sk-fancy-${crypto.randomUUID()}/+?& "q" \\ <a>=%`;
const SECRETS = { plain: "/secrets/plain", fancy: "/secrets/fancy" } as const;

let reflect: Awaited<ReturnType<typeof startReflectServer>>;
// One project for the file: its secrets are set once, and the last test reads what every test saw.
let itx: Handle<ProjectRoot>;
const seenByClient: string[] = [];

beforeAll(async () => {
  reflect = await startReflectServer();
  itx = await projectItx("scrub");
  for (const [name, material] of [["plain", PLAIN], ["fancy", FANCY]] as const) {
    await itx.secrets.get(SECRETS[name]).update({ material, egress: { urls: [`${reflect.url}/reflect/`] } });
  }
});
afterAll(async () => {
  itx?.[Symbol.dispose]();
  await reflect.close();
});

function requestInit(secret: keyof typeof SECRETS) {
  return { method: "POST", headers: { "x-key": `getSecret("${SECRETS[secret]}")` } };
}

// Every way the tests know to read material back out of bytes: each charset, each escape, each encoding.
function leaks(bytes: Uint8Array, material: string): string[] {
  const buffer = Buffer.from(bytes);
  const found: string[] = [];
  const texts: Array<[string, string]> = [
    ["utf8", buffer.toString("utf8")],
    ["latin1", buffer.toString("latin1")],
    ["utf16le", buffer.toString("utf16le")],
    ["utf16le+1", buffer.subarray(1).toString("utf16le")],
  ];
  const utf8 = Buffer.from(material, "utf8");
  for (const [charset, text] of texts) {
    const decodings: Array<[string, () => string]> = [
      ["as written", () => text],
      ["JSON", () => text.replace(/\\u([0-9a-fA-F]{4})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))).replace(/\\(["\\/])/g, "$1")],
      ["percent", () => decodeURIComponent(text.replaceAll("+", " ").replace(/%(?![0-9a-fA-F]{2})/g, "%25"))],
    ];
    for (const [name, decode] of decodings) {
      try {
        if (decode().includes(material)) found.push(`${charset} ${name}`);
      } catch {
        // not decodable this way
      }
    }
    for (const token of text.match(/[A-Za-z0-9+/_-]{12,}/g) ?? []) {
      for (let skip = 0; skip < 4; skip++) {
        const decoded = Buffer.from(token.slice(skip), token.includes("-") || token.includes("_") ? "base64url" : "base64");
        if (decoded.includes(utf8)) found.push(`${charset} base64`);
      }
    }
  }
  if (buffer.includes(Buffer.from(material, "utf16le")) || buffer.includes(Buffer.from(material, "utf16le").swap16())) found.push("utf16 bytes");
  return found;
}

function readAs(form: ReflectForm, bytes: Uint8Array): string {
  if (form === "utf16le") return Buffer.from(bytes).toString("utf16le");
  if (form === "utf16be") return Buffer.from(bytes).swap16().toString("utf16le");
  return Buffer.from(bytes).toString("utf8");
}

// The server answers the material reversed, which the response scrub cannot recognise; the
// script turns it back. Only the run-result scrub stands between it and the stored result.
function unreverse(secret: keyof typeof SECRETS): string {
  return `[...(await (await fetch("${reflect.url}/reflect/reversed", ${JSON.stringify(requestInit(secret))})).text())].reverse().join("")`;
}

describe("the scrub: an echo of substituted material never reaches the caller", () => {
  for (const secret of ["plain", "fancy"] as const) {
    const material = secret === "plain" ? PLAIN : FANCY;
    test.each(REFLECT_FORMS.filter((form) => form !== "headers"))(`a handle's fetch: echoed as %s (${secret} material)`, async (form: ReflectForm) => {
      const response = await itx.fetch(`${reflect.url}/reflect/${form}`, requestInit(secret));
      expect(response.status).toBe(200);
      const bytes = new Uint8Array(await response.arrayBuffer());
      seenByClient.push(Buffer.from(bytes).toString("latin1"));
      expect(leaks(bytes, material), form).toEqual([]);
      // The answer keeps its shape and charset: the spelling became [secret], in that charset.
      expect(readAs(form, bytes), form).toContain("[secret]");
    });
  }

  test("a handle's fetch: echoed in headers, set-cookie lines and a redirect location", async () => {
    const response = await itx.fetch(`${reflect.url}/reflect/headers`, requestInit("plain"));
    const headerText = [...response.headers].map(([name, value]: [string, string]) => `${name}: ${value}`).join("\n");
    const cookies: string[] = response.headers.getSetCookie();
    seenByClient.push(headerText, cookies.join("\n"));
    expect(leaks(new TextEncoder().encode(`${headerText}\n${cookies.join("\n")}`), PLAIN)).toEqual([]);
    expect(response.headers.get("x-echo")).toBe("[secret]");
    expect(response.headers.get("location")).toBe("https://example.com/cb?code=[secret]");
    expect(cookies).toHaveLength(2);
    expect(cookies[0]).toBe("session=[secret]; Path=/; HttpOnly");
    // Base64's last characters mix the material's final bits with padding; at most those remain.
    expect(cookies[1]).toMatch(/^b64=\[secret\][A-Za-z0-9+/]{0,2}=*; Path=\/$/);
  });

  test("gzip and brotli answers still arrive readable, and scrubbed", async () => {
    const gzip = await itx.fetch(`${reflect.url}/reflect/gzip`, requestInit("fancy"));
    expect(await gzip.text()).toBe("gzipped: [secret]");
    const br = await itx.fetch(`${reflect.url}/reflect/br`, requestInit("fancy"));
    expect(await br.text()).toBe("brotli: [secret]");
  });

  test("a script's bare fetch gets the same scrubbed bytes (its answer is returned as hex, which the run scrub does not read)", async () => {
    const forms = ["octet-stream", "utf16le", "base64", "json-ascii", "gzip"] as const;
    const hexes = (await itx.run(`async () => {
      const out = {};
      for (const form of ${JSON.stringify(forms)}) {
        const response = await fetch("${reflect.url}/reflect/" + form, ${JSON.stringify(requestInit("fancy"))});
        out[form] = [...new Uint8Array(await response.arrayBuffer())].map((b) => b.toString(16).padStart(2, "0")).join("");
      }
      return out;
    }`)) as Record<string, string>;
    for (const form of forms) {
      const bytes = Buffer.from(hexes[form] ?? "", "hex");
      expect(bytes.length, form).toBeGreaterThan(0);
      expect(leaks(bytes, FANCY), form).toEqual([]);
    }
  });

  test("a large answer streams through with material straddling every chunk boundary", async () => {
    const response = await itx.fetch(`${reflect.url}/reflect/stream`, requestInit("fancy"));
    const bytes = new Uint8Array(await response.arrayBuffer());
    const text = Buffer.from(bytes).toString("utf8");
    expect(leaks(bytes, FANCY)).toEqual([]);
    expect(text.split("[secret]")).toHaveLength(4);
    const length = Buffer.byteLength(FANCY);
    const sent = 3 * 65_536 + (length - Math.floor(length / 2)) + 10;
    expect(bytes.length).toBe(sent - 3 * length + 3 * "[secret]".length);
  });

  test("an answer in an encoding the scrub cannot read is refused", async () => {
    const error = await expectCode(itx.fetch(`${reflect.url}/reflect/deflate`, requestInit("plain")), "EGRESS_REFUSED");
    seenByClient.push(error.message);
  });
});

describe("a run's result never carries material the run used", () => {
  test("returned as written, in a key, or base64: replaced with [secret] in the answer and in run-settled", async () => {
    // What the script returns, with [secret] in place of the material.
    const result = (await itx.run(`async () => {
      const material = ${unreverse("plain")};
      return { material, [material]: "as a key", encoded: btoa(material), nested: [{ note: "got " + material }] };
    }`)) as Record<string, unknown>;
    seenByClient.push(JSON.stringify(result));
    expect(JSON.stringify(result)).not.toContain(PLAIN);
    expect(result.material).toBe("[secret]");
    expect(result["[secret]"]).toBe("as a key");
    expect(result.encoded).toContain("[secret]");
    expect(Buffer.from(String(result.encoded).replace("[secret]", ""), "base64").toString("latin1")).not.toContain(PLAIN.slice(0, 12));
    expect(result.nested).toEqual([{ note: "got [secret]" }]);
    const events = await itx.getEvents({ afterOffset: 0, limit: 500 });
    seenByClient.push(JSON.stringify(events));
    const settled = (events as Array<StreamEvent<string, { result: { material: unknown } }>>).filter((event) => event.type === "events.iterate.com/itx/run-settled");
    expect(settled.length).toBeGreaterThan(0);
    expect(JSON.stringify(events)).not.toContain(PLAIN);
    expect(JSON.stringify(settled.at(-1)?.payload.result.material)).toBe('"[secret]"');
  });

  test("a material with escapes and non-ASCII is caught too, and so is a throw that quotes it", async () => {
    const result = await itx.run(`async () => ({ fancy: ${unreverse("fancy")} })`);
    expect(result).toEqual({ fancy: "[secret]" });
    const error = await expectCode(itx.run(`async () => { throw new Error("leaked: " + ${unreverse("plain")}); }`), "SCRIPT_FAILED");
    seenByClient.push(error.message);
    expect(error.message).toContain("leaked: [secret]");
    expect(error.message).not.toContain(PLAIN);
    const events = await itx.getEvents({ afterOffset: 0, limit: 500 });
    expect(JSON.stringify(events)).not.toContain(PLAIN);
    expect(JSON.stringify(events)).not.toContain(FANCY);
  });

  test("a run that used no secret is answered untouched", async () => {
    expect(await itx.run(`async () => ({ text: "sk-live- [secret]? no", n: 1 })`)).toEqual({ text: "sk-live- [secret]? no", n: 1 });
  });

  test("a script that keeps material in a global and returns it from a later run that used none: [secret]", async () => {
    // Isolates are reused across runs of the same source and scope: the second run finds the
    // first one's global, and uses no secret itself.
    const child = itx.extend({ name: "stash-script" });
    const script = `async () => {
      if (globalThis.kept) return { kept: globalThis.kept };
      globalThis.kept = ${unreverse("plain")};
      return "kept";
    }`;
    expect(await child.run(script)).toBe("kept");
    const later = await child.run(script);
    seenByClient.push(JSON.stringify(later));
    expect(later).toEqual({ kept: "[secret]" });
  });
});

// A dynamic worker that turns a reversed echo back (which the response scrub cannot recognise)
// and answers the material in every shape a method can answer.
const WORKER = (grab: string) => `import { DurableObject, RpcTarget, WorkerEntrypoint } from "cloudflare:workers";
const grab = async (): Promise<string> => ${grab};
let kept: string | undefined;
class Vault extends RpcTarget {
  open(): string { return kept ?? "nothing kept"; }
}
export default class extends WorkerEntrypoint {
  async grab(): Promise<string> { return grab(); }
  async shapes(): Promise<unknown> {
    const m = await grab();
    return { m, [m]: "as a key", list: [btoa(m), "note " + m], bytes: new TextEncoder().encode("bytes " + m), n: 1 };
  }
  async boom(): Promise<never> { throw Object.assign(new Error("leaked: " + (await grab())), { code: "NOT_FOUND" }); }
  async keep(): Promise<string> { kept = await grab(); return "kept"; }
  recall(): string { return kept ?? "nothing kept"; }
  vault(): Vault { return new Vault(); }
  async streamed(): Promise<ReadableStream> { return new Response("streamed " + (await grab())).body as ReadableStream; }
  async fetch(): Promise<Response> {
    const m = await grab();
    return new Response("body " + m, { headers: { "x-echo": m, "content-type": "text/plain" } });
  }
}
export class Keeper extends DurableObject {
  async keep(): Promise<string> { await this.ctx.storage.put("m", await grab()); return "kept"; }
  async give(): Promise<unknown> { return this.ctx.storage.get("m"); }
  async grab(): Promise<string> { return grab(); }
}
`;

interface Grabber {
  grab(): Promise<string>;
  shapes(): Promise<{ m: string; list: string[]; bytes: Uint8Array; n: number } & Record<string, unknown>>;
  boom(): Promise<never>;
  keep(): Promise<string>;
  recall(): Promise<string>;
  vault(): Promise<{ open(): Promise<string> }>;
  streamed(): Promise<ReadableStream<Uint8Array>>;
  fetch(url: string): Promise<Response>;
}
interface Keeper {
  keep(): Promise<string>;
  give(): Promise<unknown>;
  grab(): Promise<string>;
}

const files = () => ({ "src/index.ts": WORKER(unreverse("plain")) });
// Each test takes a context of its own: a scope that has used no material until the test says so.
const worker = (context: { workers: Pick<ProjectRoot["workers"], "get"> }) => context.workers.get({ source: { files: files() } }) as unknown as Grabber;

describe("what a dynamic worker answers never carries material its context used", () => {

  test("a method that returns material a server echoed reversed: [secret]", { timeout: 120_000 }, async () => {
    const grabbed = await worker(itx.extend({ name: "w-grab" })).grab();
    seenByClient.push(grabbed);
    expect(grabbed).toBe("[secret]");
  });

  test("in strings, keys, lists and bytes of a result, and in a thrown message (its code kept)", { timeout: 120_000 }, async () => {
    const w = worker(itx.extend({ name: "w-shapes" }));
    const shapes = await w.shapes();
    const bytes = new TextDecoder().decode(shapes.bytes);
    seenByClient.push(JSON.stringify(shapes), bytes);
    expect(shapes.m).toBe("[secret]");
    expect(shapes["[secret]"]).toBe("as a key");
    expect(shapes.list[1]).toBe("note [secret]");
    expect(shapes.list[0]).toContain("[secret]");
    expect(bytes).toBe("bytes [secret]");
    expect(shapes.n).toBe(1);
    const error = await expectCode(w.boom(), "NOT_FOUND");
    seenByClient.push(error.message);
    expect(error.message).toContain("leaked: [secret]");
  });

  test("kept in a global by one call and returned by a later call that used none: [secret]", { timeout: 120_000 }, async () => {
    const context = itx.extend({ name: "w-stash" });
    expect(await worker(context).keep()).toBe("kept");
    // Another handle on the same source and context reaches the same isolate.
    const recalled = await worker(context).recall();
    seenByClient.push(recalled);
    expect(recalled).toBe("[secret]");
  });

  test("a stub handed out before any material was used scrubs what its methods answer later", { timeout: 120_000 }, async () => {
    const w = worker(itx.extend({ name: "w-vault" }));
    const vault = await w.vault();
    expect(await w.keep()).toBe("kept");
    const opened = await vault.open();
    seenByClient.push(opened);
    expect(opened).toBe("[secret]");
  });

  test("fetch answers a Response whose headers and body are scrubbed; a returned stream is scrubbed as it streams", { timeout: 120_000 }, async () => {
    const w = worker(itx.extend({ name: "w-fetch" }));
    const response = await w.fetch("https://worker.invalid/");
    const body = await response.text();
    seenByClient.push(body, [...response.headers].join("\n"));
    expect(response.status).toBe(200);
    expect(body).toBe("body [secret]");
    expect(response.headers.get("x-echo")).toBe("[secret]");
    const streamed = await new Response(await w.streamed()).text();
    seenByClient.push(streamed);
    expect(streamed).toBe("streamed [secret]");
  });

  test("a durable worker: its answers, and material it kept in its storage and gives back later", { timeout: 120_000 }, async () => {
    const context = itx.extend({ name: "w-durable" });
    const keeper = () => context.workers.get({ source: { files: files() }, durableObject: { className: "Keeper", key: "keeper" } }) as unknown as Keeper;
    expect(await keeper().grab()).toBe("[secret]");
    expect(await keeper().keep()).toBe("kept");
    const given = await keeper().give();
    seenByClient.push(String(given));
    expect(given).toBe("[secret]");
  });

  test("a source capability's method: [secret]", { timeout: 120_000 }, async () => {
    const context = itx.extend({ name: "w-capability" });
    const module = `import { WorkerEntrypoint } from "cloudflare:workers";
export default class extends WorkerEntrypoint {
  async grab() { return ${unreverse("plain")}; }
}`;
    await context.provideCapability({ name: "grabber", capability: { type: "rpc", worker: { type: "source", source: { mainModule: "grabber.js", modules: { "grabber.js": module } } } } });
    const grabbed = await (context as unknown as { grabber: { grab(): Promise<string> } }).grabber.grab();
    seenByClient.push(grabbed);
    expect(grabbed).toBe("[secret]");
  });

  test("a worker whose context used no secret is answered untouched", { timeout: 120_000 }, async () => {
    const plain = itx.extend({ name: "w-plain" }).workers.get({ source: { files: { "src/index.ts": `import { WorkerEntrypoint } from "cloudflare:workers";
export default class extends WorkerEntrypoint { echo(value: unknown) { return value; } }` } } }) as unknown as { echo(value: unknown): Promise<unknown> };
    const value = { text: "sk-live- [secret]? no", list: [1, "two"], nested: { ok: true } };
    expect(await plain.echo(value)).toEqual(value);
  });
});

describe("the record every test added to", () => {
  test("no answer, event, error or log line the client saw contains either material", () => {
    expect(seenByClient.length).toBeGreaterThan(10);
    for (const text of seenByClient) {
      expect(text).not.toContain(PLAIN);
      expect(text).not.toContain(FANCY);
    }
    const logPath = inject("logPath");
    const log = logPath ? readFileSync(logPath, "utf8") : "";
    expect(log).not.toContain(PLAIN);
    expect(log).not.toContain(FANCY);
  });
});
