// node --test: the bench's direct socket onto one Worker (worker-socket.ts, decision 0027). The
// last test runs a real Miniflare (workerd), with a Worker that has assets and `run_worker_first`
// like the OS, and checks that the socket reaches the Worker without the assets router.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.ts";
import { formatWorkerSocket, installWorkerSocket, parseWorkerSocket, withWorkerSocket } from "./worker-socket.ts";

const SOCKET = { worker: "iterate-os", host: "127.0.0.1", port: 40_123 };

test("the environment value round-trips; malformed values give undefined", () => {
  assert.equal(formatWorkerSocket(SOCKET), "iterate-os@127.0.0.1:40123");
  assert.deepEqual(parseWorkerSocket(formatWorkerSocket(SOCKET)), SOCKET);
  for (const bad of [undefined, "", "iterate-os", "iterate-os@127.0.0.1", "@127.0.0.1:1", "iterate-os@127.0.0.1:0", "iterate-os@127.0.0.1:70000"]) {
    assert.equal(parseWorkerSocket(bad), undefined, String(bad));
  }
});

test("the socket is declared on a Worker without assets, naming the target as its service", () => {
  const options = { port: 1, workers: [{ name: "iterate-os", assets: { directory: "/x" } }, { name: "iterate-bundler" }] };
  const patched = withWorkerSocket(options, SOCKET);
  assert.deepEqual(patched.workers, [
    { name: "iterate-os", assets: { directory: "/x" } },
    { name: "iterate-bundler", unsafeDirectSockets: [{ host: "127.0.0.1", port: 40_123, serviceName: "iterate-os" }] },
  ]);
  assert.equal(patched.port, 1);
  // The input is not changed.
  assert.equal("unsafeDirectSockets" in (options.workers[1] as object), false);
});

test("options without the target Worker, or with no Worker free of assets, are unchanged", () => {
  const proxy = { workers: [{ name: "ProxyWorker" }, { name: "InspectorProxyWorker" }] };
  assert.equal(withWorkerSocket(proxy, SOCKET), proxy);
  const onlyAssets = { workers: [{ name: "iterate-os", assets: {} }] };
  assert.equal(withWorkerSocket(onlyAssets, SOCKET), onlyAssets);
  const none = {};
  assert.equal(withWorkerSocket(none, SOCKET), none);
});

test("a real Miniflare serves the Worker at the socket, past the assets router", { timeout: 60_000 }, async () => {
  // wrangler's own miniflare, loaded the way wrangler loads it (`require("miniflare")`).
  const wranglerRequire = createRequire(createRequire(join(dirname(fileURLToPath(import.meta.url)), "..", "package.json")).resolve("wrangler"));
  const folder = mkdtempSync(join(tmpdir(), "worker-socket-test-"));
  writeFileSync(join(folder, "index.html"), "an asset");
  const port = await freePort();
  const uninstall = installWorkerSocket({ worker: "target", host: "127.0.0.1", port });
  // oxlint-disable-next-line typescript/no-explicit-any -- miniflare's module, untyped here
  let mf: any;
  try {
    // oxlint-disable-next-line typescript/no-explicit-any -- as above
    const miniflare: any = wranglerRequire("miniflare");
    // Assets first (no run_worker_first): at the entry socket the router answers /index.html
    // from the assets; at the direct socket the Worker answers it, so no router ran.
    const script = `export default { fetch(request) { return new Response("worker " + new URL(request.url).pathname); } }`;
    const options = miniflare.convertV4MiniflareOptions({
      port: 0,
      workers: [
        { name: "target", modules: true, script, compatibilityDate: "2025-01-01", assets: { directory: folder, binding: "ASSETS", routerConfig: { invoke_user_worker_ahead_of_assets: false, has_user_worker: true } } },
        { name: "other", modules: true, script: `export default { fetch() { return new Response("other"); } }`, compatibilityDate: "2025-01-01" },
      ],
    });
    mf = new miniflare.Miniflare(options);
    const entry = await mf.ready;
    assert.equal(await (await fetch(new URL("/index.html", entry))).text(), "an asset");
    const direct = await fetch(`http://127.0.0.1:${port}/index.html`);
    assert.equal(await direct.text(), "worker /index.html");
  } finally {
    uninstall();
    await mf?.dispose();
    rmSync(folder, { recursive: true, force: true });
  }
});
