import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { ITERATE_WORKER_MODULE } from "../src/sdk/worker-module.generated.ts";
import { WORKER_MODULE_PATH, WORKER_SOURCE_PATH, renderWorkerModule } from "./generate-worker-module.ts";

describe("the iterate/worker module the platform ships into loaded code", () => {
  test("the generated copy matches worker.ts (else run `pnpm --filter iterate generate`)", () => {
    expect(readFileSync(WORKER_MODULE_PATH, "utf8")).toBe(renderWorkerModule(readFileSync(WORKER_SOURCE_PATH, "utf8")));
  });

  test("it imports nothing but cloudflare:workers and keeps no types", () => {
    const specifiers = [...ITERATE_WORKER_MODULE.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)"/gm)].map((match) => match[1]);
    expect(specifiers).toEqual(["cloudflare:workers"]);
    expect(ITERATE_WORKER_MODULE).not.toMatch(/\bimport\s*\(/);
    expect(ITERATE_WORKER_MODULE).not.toMatch(/^\s*(?:import|export) type\b/m);
    expect(ITERATE_WORKER_MODULE).toMatch(/^export class IterateEntrypoint\b/m);
    expect(ITERATE_WORKER_MODULE).toMatch(/^export class IterateDurableObject\b/m);
  });
});
