import { createServer, type ServerResponse } from "node:http";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { listenOnLoopback } from "./loopback-server.ts";

/**
 * The echo forms a hostile or careless server might send material back in. Each route of the
 * reflect server answers the `x-key` header it received in one of them.
 */
export const REFLECT_FORMS = [
  "octet-stream",
  "json",
  "json-ascii",
  "base64",
  "base64url",
  "basic",
  "url",
  "form",
  "utf16le",
  "utf16be",
  "headers",
  "gzip",
  "br",
] as const;

export type ReflectForm = (typeof REFLECT_FORMS)[number] | "deflate" | "stream" | "reversed";

/**
 * A loopback HTTP server that answers the material it was sent (its `x-key` header) in the
 * form named by its path: /reflect/<form>. Listens on 127.0.0.1 only.
 */
export async function startReflectServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const header = request.headers["x-key"];
      const key = typeof header === "string" ? header : "";
      const form = (request.url ?? "").replace(/^\/reflect\//, "").replace(/\?.*$/, "") as ReflectForm;
      void reflect(form, key, response);
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return {
    url: origin,
    close,
  };
}

function filler(size: number): Buffer {
  return Buffer.alloc(size, 0x61);
}

async function reflect(form: ReflectForm, key: string, response: ServerResponse): Promise<void> {
  const utf8 = Buffer.from(key, "utf8");
  const send = (type: string, body: Buffer | string, headers: Record<string, string | string[]> = {}) => {
    response.writeHead(200, { "content-type": type, ...headers });
    response.end(body);
  };
  switch (form) {
    case "octet-stream":
      return send("application/octet-stream", Buffer.concat([Buffer.from([0, 1, 2, 255]), utf8, Buffer.from([0xfe, 0])]));
    case "json":
      return send("application/json", JSON.stringify({ echoed: key }));
    case "json-ascii":
      // Python's json.dumps: non-ASCII as \uXXXX, "/" left alone.
      return send("application/json", `{"echoed": "${JSON.stringify(key).slice(1, -1).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}"}`);
    case "base64":
      return send("text/plain", `token: ${utf8.toString("base64")}\n`);
    case "base64url":
      return send("text/plain", Buffer.concat([Buffer.from("xy"), utf8]).toString("base64url"));
    case "basic":
      return send("text/plain", `Authorization: Basic ${Buffer.from(`user:${key}`, "utf8").toString("base64")}`);
    case "url":
      return send("text/html", `<a href="/cb?code=${encodeURIComponent(key)}&state=1">continue</a>`);
    case "form":
      return send("application/x-www-form-urlencoded", new URLSearchParams({ a: "1", echoed: key }).toString());
    case "utf16le":
      return send("text/plain; charset=utf-16le", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`key=${key}`, "utf16le")]));
    case "utf16be":
      return send("text/plain; charset=utf-16be", Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(`key=${key}`, "utf16le").swap16()]));
    case "headers":
      return send("text/plain", "see headers", {
        "x-echo": key,
        location: `https://example.com/cb?code=${encodeURIComponent(key)}`,
        "set-cookie": [`session=${key}; Path=/; HttpOnly`, `b64=${utf8.toString("base64")}; Path=/`],
      });
    case "gzip":
      return send("text/plain", gzipSync(Buffer.from(`gzipped: ${key}`)), { "content-encoding": "gzip" });
    case "br":
      return send("text/plain", brotliCompressSync(Buffer.from(`brotli: ${key}`)), { "content-encoding": "br" });
    case "deflate":
      return send("text/plain", deflateSync(Buffer.from(`deflated: ${key}`)), { "content-encoding": "deflate" });
    case "reversed":
      return send("text/plain", [...key].toReversed().join(""));
    case "stream": {
      // Three 64 KiB chunks, some time apart, with the material straddling each boundary.
      response.writeHead(200, { "content-type": "application/octet-stream" });
      const half = Math.floor(utf8.length / 2);
      const chunkSize = 65_536;
      response.write(Buffer.concat([filler(chunkSize - half), utf8.subarray(0, half)]));
      for (let i = 0; i < 2; i++) {
        await new Promise((done) => setTimeout(done, 50));
        response.write(Buffer.concat([utf8.subarray(half), filler(chunkSize - utf8.length), utf8.subarray(0, half)]));
      }
      await new Promise((done) => setTimeout(done, 50));
      response.end(Buffer.concat([utf8.subarray(half), filler(10)]));
      return;
    }
    default:
      response.writeHead(404);
      response.end();
  }
}
