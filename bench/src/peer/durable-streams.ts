import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DurableStream } from "@durable-streams/client";
import { freePort } from "@iterate/os/local-os";

export interface DurableStreamsPeer {
  baseUrl: string;
  create(name: string): Promise<DurableStream>;
  stop(): Promise<void>;
}

/** Starts the file-backed Durable Streams reference server in its own process, on loopback. */
export async function startDurableStreamsPeer(): Promise<DurableStreamsPeer> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "ds-peer-"));
  const child = spawn(process.execPath, [join(import.meta.dirname, "durable-streams-server.ts")], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((ready, fail) => {
    child.once("exit", (code) => fail(new Error(`Durable Streams peer exited with ${code}`)));
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) ready();
    });
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const run = `r${Date.now()}`;
  return {
    baseUrl,
    create: (name) => DurableStream.create({ url: `${baseUrl}/bench/${run}/${name}`, contentType: "application/json" }),
    async stop() {
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One POST of a JSON array, the protocol-level batch append. */
export async function postBatch(url: string, body: string, headers: Record<string, string> = {}): Promise<void> {
  const response = await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`POST ${url} -> ${response.status}`);
}

/** Reads a whole stream from the start with the protocol's offset loop; answers the item count. */
export async function readAll(url: string, headers: Record<string, string> = {}): Promise<number> {
  let offset = "-1";
  let items = 0;
  for (;;) {
    const response = await fetch(`${url}?offset=${encodeURIComponent(offset)}`, { headers });
    if (!response.ok) throw new Error(`GET ${url} -> ${response.status}`);
    items += (JSON.parse(await response.text()) as unknown[]).length;
    offset = response.headers.get("stream-next-offset") ?? offset;
    if (response.headers.get("stream-up-to-date") === "true") return items;
  }
}
