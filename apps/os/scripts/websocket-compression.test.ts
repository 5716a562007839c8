// node --test: the OS Worker's compatibility flags turn WebSocket compression off (decision 0028).
// A real Miniflare (workerd) runs a Worker with the flags of apps/os/wrangler.jsonc that answers
// every upgrade with a WebSocket; a client that offers permessage-deflate, as Node's and every
// browser's WebSocket do, must get a 101 that accepts no extension. A Worker with the same
// compatibility date and no flag is the control: there the offer is taken. Both are reached at a
// socket of the Worker's own (decision 0027): Miniflare's entry worker in front of it negotiates
// compression by its own flags, and a deployment has no such worker.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.ts";

const OS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");

function osCompatibility(): { date: string; flags: string[] } {
  // The config's comments are whole lines (`//`), as local-os.ts reads it.
  const text = readFileSync(join(OS_DIR, "wrangler.jsonc"), "utf8")
    .split("\n")
    .filter((line) => !line.trim().startsWith("//"))
    .join("\n");
  const config = JSON.parse(text) as { compatibility_date: string; compatibility_flags?: string[] };
  return { date: config.compatibility_date, flags: config.compatibility_flags ?? [] };
}

/** The head of the 101 a client offering permessage-deflate gets from `url`. */
function upgradeHead(url: URL): Promise<string> {
  return new Promise((settle, fail) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        `GET /api HTTP/1.1\r\nHost: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n",
      );
    });
    let head = "";
    socket.on("data", (chunk) => {
      head += chunk.toString("latin1");
      const end = head.indexOf("\r\n\r\n");
      if (end >= 0) {
        socket.destroy();
        settle(head.slice(0, end));
      }
    });
    socket.on("error", fail);
  });
}

test("the OS Worker's WebSockets take no permessage-deflate offer; without the flag the same date takes it", { timeout: 60_000 }, async () => {
  const { date, flags } = osCompatibility();
  assert.ok(flags.includes("no_web_socket_compression"), `apps/os/wrangler.jsonc has ${flags.join(", ")}`);
  const wranglerRequire = createRequire(createRequire(join(OS_DIR, "package.json")).resolve("wrangler"));
  // oxlint-disable-next-line typescript/no-explicit-any -- miniflare's module, untyped here
  const miniflare: any = wranglerRequire("miniflare");
  const script = `export default { fetch() { const [client, server] = Object.values(new WebSocketPair()); server.accept(); return new Response(null, { status: 101, webSocket: client }); } }`;
  for (const [compatibilityFlags, compressed] of [[flags, false], [flags.filter((flag) => flag !== "no_web_socket_compression"), true]] as const) {
    const port = await freePort();
    const mf = new miniflare.Miniflare(
      miniflare.convertV4MiniflareOptions({ port: 0, modules: true, script, compatibilityDate: date, compatibilityFlags, unsafeDirectSockets: [{ host: "127.0.0.1", port }] }),
    );
    try {
      await mf.ready;
      const head = await upgradeHead(new URL(`http://127.0.0.1:${port}`));
      assert.match(head, /^HTTP\/1\.1 101 /);
      assert.equal(/sec-websocket-extensions:\s*permessage-deflate/i.test(head), compressed, `${compatibilityFlags.join(",")}: ${head}`);
    } finally {
      await mf.dispose();
    }
  }
});
