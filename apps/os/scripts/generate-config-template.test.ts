// node --test: the generated template matches configs/default, and the seed builder refuses
// imports the seed could not load.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { buildSeedModules, GENERATED_PATH, readTemplate, renderConfigTemplate } from "./generate-config-template.ts";

test("config-template.generated.ts is current with configs/default (run `pnpm --filter @iterate/os generate`)", () => {
  assert.equal(readFileSync(GENERATED_PATH, "utf8"), renderConfigTemplate(readTemplate()));
});

test("the template has a worker, an apps folder, a package.json typed by iterate and an AGENTS.md", () => {
  const files = readTemplate();
  assert.ok(files["worker.ts"]?.includes("extends IterateConfigEntrypoint"));
  assert.ok(Object.keys(files).some((path) => path.startsWith("apps/")));
  assert.ok(JSON.parse(files["package.json"] ?? "{}").devDependencies?.iterate);
  assert.ok(files["AGENTS.md"]);
});

test("seed modules point iterate/sdk and relative imports at built names, and refuse anything else", () => {
  const modules = buildSeedModules({ "worker.ts": 'import { X } from "iterate/sdk";\nimport { y } from "./apps/y.ts";\nexport default X;', "apps/y.ts": "export const y: number = 1;" });
  assert.match(modules["worker.js"] ?? "", /from "\.\/iterate-sdk\.js"/);
  assert.match(modules["worker.js"] ?? "", /from "\.\/apps\/y\.js"/);
  assert.doesNotMatch(modules["apps/y.js"] ?? "", /number/);
  assert.throws(() => buildSeedModules({ "worker.ts": 'import z from "zod";' }), /may import only/);
});
