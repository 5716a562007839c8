// The bundler Worker parses untrusted source: its configuration may give it nothing to misuse.
// A new field here is a decision (docs/decisions/0019-bundler-worker.md), not a convenience.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const OS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");

function config(file: string): Record<string, unknown> {
  const text = readFileSync(join(OS_DIR, file), "utf8")
    .split("\n")
    .filter((line) => !line.trim().startsWith("//"))
    .join("\n");
  return JSON.parse(text) as Record<string, unknown>;
}

// Everything else wrangler accepts (vars, secrets, services, durable_objects, kv_namespaces,
// worker_loaders, ai, routes, ...) would hand the bundler a secret, a binding or a public route.
const ALLOWED = new Set(["$schema", "name", "main", "compatibility_date", "compatibility_flags", "workers_dev", "preview_urls", "observability"]);

test("the bundler Worker's configuration has no vars, secrets, bindings or routes", () => {
  const bundler = config("wrangler.bundler.jsonc");
  const extra = Object.keys(bundler).filter((key) => !ALLOWED.has(key));
  assert.deepEqual(extra, []);
  assert.equal(bundler.workers_dev, false, "reachable only through the OS's service binding");
  assert.equal(bundler.preview_urls, false);
});

test("the OS binds the bundler Worker by its configured name and entrypoint", () => {
  const os = config("wrangler.jsonc");
  const bundler = config("wrangler.bundler.jsonc");
  const services = os.services as Array<{ binding: string; service: string; entrypoint?: string }>;
  assert.deepEqual(
    services.find((service) => service.binding === "BUNDLER"),
    { binding: "BUNDLER", service: bundler.name, entrypoint: "BundlerEntrypoint" },
  );
});
