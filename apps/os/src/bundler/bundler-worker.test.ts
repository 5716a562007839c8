import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { LIMITS } from "../limits.ts";
import { expectCode } from "iterate/stream/test-support";
import { bundleSource } from "./bundle-source.ts";
import { checkedBundle } from "./bundler-client.ts";
import { NpmBudget } from "./npm-guard.ts";
import type { BundleAnswer } from "./bundler-protocol.ts";

// Through the BUNDLER service binding, as the OS calls it (vitest.config.ts binds the entrypoint).
const bundle = (request: unknown): Promise<BundleAnswer> => env.BUNDLER.bundle(request as never);

function failure(answer: BundleAnswer) {
  if (answer.ok) throw new Error("expected a coded failure, got a bundle");
  return answer.error;
}

describe("the bundler Worker", () => {
  // The first build of an isolate compiles esbuild's wasm: seconds, more on a loaded machine.
  test("bundles TypeScript across files, resolving the virtual modules it is given", { timeout: 180_000 }, async () => {
    const answer = await bundle({
      files: { "src/index.ts": `import { greet } from "./greet";\nimport { name } from "platform/name";\nexport default { fetch: (): Response => new Response(greet(name)) };`, "src/greet.ts": "export const greet = (who: string): string => `hello ${who}`;" },
      entryPoint: "src/index.ts",
      virtualModules: { "platform/name": "export const name = 'bundler';" },
    });
    if (!answer.ok) throw new Error(answer.error.message);
    const main = answer.value.modules[answer.value.mainModule];
    expect(main).toContain("hello ${who}");
    expect(main).toContain("'bundler'".replaceAll("'", '"'));
    expect(main).not.toContain(": string");
  });

  test("source that does not build is INVALID_ARGUMENT naming the file and line", { timeout: 180_000 }, async () => {
    const error = failure(await bundle({ files: { "index.ts": "export default {\n  fetch( {\n};" }, virtualModules: {} }));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.details).toEqual({ reason: "build-failed" });
    expect(error.message).toMatch(/index\.ts:\d+:\d+/);
  });

  test("it checks its input against the named limits itself, whoever sends it", async () => {
    const tooMany = Object.fromEntries(Array.from({ length: LIMITS.WORKER_FILES_MAX + 1 }, (_, i) => [`f${i}.ts`, "export {};"]));
    expect(failure(await bundle({ files: tooMany, virtualModules: {} }))).toMatchObject({ code: "INVALID_ARGUMENT", details: { limit: "WORKER_FILES_MAX" } });
    const tooBig = { "index.ts": "x".repeat(LIMITS.WORKER_SOURCE_MAX_BYTES + 1) };
    expect(failure(await bundle({ files: tooBig, virtualModules: {} }))).toMatchObject({ code: "INVALID_ARGUMENT", details: { limit: "WORKER_SOURCE_MAX_BYTES" } });
    const bigVirtual = { "a.ts": "x".repeat(LIMITS.WORKER_SOURCE_MAX_BYTES) };
    expect(failure(await bundle({ files: { "index.ts": "export {};" }, virtualModules: bigVirtual }))).toMatchObject({ code: "INVALID_ARGUMENT", details: { limit: "WORKER_SOURCE_MAX_BYTES" } });
    expect(failure(await bundle({ files: { "../x.ts": "export {};" }, virtualModules: {} }))).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(failure(await bundle({ files: { "index.ts": "export {};" } }))).toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  test("a bundle past BUNDLE_OUTPUT_MAX_CHARS is RESOURCE_EXHAUSTED, not answered", { timeout: 180_000 }, async () => {
    // esbuild escapes non-ASCII text (one CJK character becomes six: \u4E2D), so source within
    // the input limits grows past the output bound.
    const text = "中".repeat(Math.floor(LIMITS.WORKER_SOURCE_MAX_BYTES * 0.9) - 64);
    const answer = await bundle({
      files: { "index.ts": `import { b } from "big/b";\nexport const a = "${text}";\nexport default { fetch: () => new Response(a + b) };` },
      virtualModules: { "big/b": `export const b = "${text}";` },
    });
    expect(failure(answer)).toMatchObject({ code: "RESOURCE_EXHAUSTED", details: { limit: "BUNDLE_OUTPUT_MAX_CHARS" } });
  });
});

describe("the OS checks what the bundler answers", () => {
  test("only a bundle's shape passes: a main module among text modules", () => {
    expect(checkedBundle({ mainModule: "index.js", modules: { "index.js": "export default {};" } })).toEqual({ mainModule: "index.js", modules: { "index.js": "export default {};" } });
    expect(() => checkedBundle({ mainModule: "missing.js", modules: { "index.js": "" } })).toThrow(/INTERNAL/);
    expect(() => checkedBundle({ mainModule: "index.js", modules: { "index.js": 1 } })).toThrow(/INTERNAL/);
    expect(() => checkedBundle(null)).toThrow(/INTERNAL/);
  });

  test("an answer past BUNDLE_OUTPUT_MAX_CHARS is RESOURCE_EXHAUSTED", () => {
    const huge = { mainModule: "index.js", modules: { "index.js": "x".repeat(LIMITS.BUNDLE_OUTPUT_MAX_CHARS + 1) } };
    expect(() => checkedBundle(huge)).toThrow(expect.objectContaining({ code: "RESOURCE_EXHAUSTED", details: { limit: "BUNDLE_OUTPUT_MAX_CHARS" } }));
  });

  test("a source whose package.json crosses a limit is RESOURCE_EXHAUSTED naming it, without reaching the network", { timeout: 180_000 }, async () => {
    const files = {
      "index.ts": `import leftPad from "left-pad";\nexport default { fetch: () => new Response(leftPad("x", 3)) };`,
      "package.json": JSON.stringify({ dependencies: { "left-pad": "1.3.0" } }),
    };
    const error = await expectCode(bundleSource({ files, virtualModules: {} }, new NpmBudget({ BUNDLE_NPM_PACKAGES_MAX: 0 })), "RESOURCE_EXHAUSTED");
    expect(error.details).toMatchObject({ limit: "BUNDLE_NPM_PACKAGES_MAX" });
  });

  test("with npm off (the OS's BUNDLER_NPM), a dependency is INVALID_ARGUMENT npm-off before any fetch; a build that needs none still builds", { timeout: 180_000 }, async () => {
    const files = {
      "index.ts": `import leftPad from "left-pad";\nexport default { fetch: () => new Response(leftPad("x", 3)) };`,
      "package.json": JSON.stringify({ dependencies: { "left-pad": "1.3.0" } }),
    };
    const refused = await expectCode(bundleSource({ files, virtualModules: {}, npm: false }), "INVALID_ARGUMENT");
    expect(refused.details).toEqual({ reason: "npm-off" });
    expect(refused.message).toContain("BUNDLER_NPM");
    const plain = await bundleSource({ files: { "index.ts": "export default { fetch: () => new Response('ok') };" }, virtualModules: {}, npm: false });
    expect(plain.modules[plain.mainModule]).toContain("ok");
    await expectCode(bundleSource({ files: { "index.ts": "export default {};" }, virtualModules: {}, npm: "no" as unknown as boolean }), "INVALID_ARGUMENT");
  });
});
