import { describe, expect, test } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import { LIMITS } from "../limits.ts";
import { guardedFetch, NpmBudget, withNpmBudget } from "./npm-guard.ts";

/** A registry stand-in: records what was asked and answers `body` (never the network). */
function fakeRegistry(body: () => BodyInit, headers: HeadersInit = {}) {
  const asked: string[] = [];
  const inner = (async (input: RequestInfo | URL) => {
    asked.push(String(input));
    return new Response(body(), { headers });
  }) as typeof fetch;
  return { asked, inner };
}

function streamOf(bytes: number, chunk = 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const size = Math.min(chunk, bytes - sent);
      sent += size;
      controller.enqueue(new Uint8Array(size));
    },
  });
}

describe("the bundler's road to npm", () => {
  test("its defaults are the named limits", () => {
    expect(new NpmBudget().limits).toEqual({
      BUNDLE_NPM_PACKAGES_MAX: LIMITS.BUNDLE_NPM_PACKAGES_MAX,
      BUNDLE_NPM_DOWNLOAD_MAX_BYTES: LIMITS.BUNDLE_NPM_DOWNLOAD_MAX_BYTES,
      BUNDLE_NPM_UNPACKED_MAX_BYTES: LIMITS.BUNDLE_NPM_UNPACKED_MAX_BYTES,
    });
  });

  test("a build reaches the npm registry and nothing else", async () => {
    const { asked, inner } = fakeRegistry(() => "{}");
    const budget = new NpmBudget();
    for (const url of ["http://127.0.0.1:8787/api", "https://registry.npmjs.org.evil.example/x", "http://registry.npmjs.org/x", "https://example.com/left-pad.tgz"]) {
      await expectCode(guardedFetch(inner, budget, url), "PERMISSION_DENIED", url);
    }
    expect(asked).toEqual([]);
    expect(await (await guardedFetch(inner, budget, "https://registry.npmjs.org/left-pad")).text()).toBe("{}");
    expect(asked).toEqual(["https://registry.npmjs.org/left-pad"]);
  });

  test("packages past BUNDLE_NPM_PACKAGES_MAX are refused before they are fetched; a package's tarball is not another", async () => {
    const { asked, inner } = fakeRegistry(() => "{}");
    const budget = new NpmBudget({ BUNDLE_NPM_PACKAGES_MAX: 2 });
    await guardedFetch(inner, budget, "https://registry.npmjs.org/a");
    await guardedFetch(inner, budget, "https://registry.npmjs.org/a/-/a-1.0.0.tgz");
    await guardedFetch(inner, budget, "https://registry.npmjs.org/@scope%2fb");
    const error = await expectCode(guardedFetch(inner, budget, "https://registry.npmjs.org/c"), "RESOURCE_EXHAUSTED");
    expect(error.details).toMatchObject({ limit: "BUNDLE_NPM_PACKAGES_MAX" });
    expect(asked).toHaveLength(3);
    // Once crossed, the build gets nothing more, tarballs included.
    await expectCode(guardedFetch(inner, budget, "https://registry.npmjs.org/a/-/a-2.0.0.tgz"), "RESOURCE_EXHAUSTED");
    expect(asked).toHaveLength(3);
  });

  test("every request is charged: a dependency named like a tarball path is a package, and a package pays for one tarball only", async () => {
    const { asked, inner } = fakeRegistry(() => "{}");
    const budget = new NpmBudget({ BUNDLE_NPM_PACKAGES_MAX: 3 });
    await guardedFetch(inner, budget, "https://registry.npmjs.org/a");
    await guardedFetch(inner, budget, "https://registry.npmjs.org/a/-/a-1.0.0.tgz");
    // `{ "x/-/0": "1", "x/-/1": "1", ... }` in a package.json: each name is a request of its own.
    const answers = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => guardedFetch(inner, budget, `https://registry.npmjs.org/x/-/${i}`)));
    expect(answers.filter((answer) => answer.status === "fulfilled")).toHaveLength(2);
    expect(answers.at(-1)).toMatchObject({ status: "rejected", reason: { code: "RESOURCE_EXHAUSTED", details: { limit: "BUNDLE_NPM_PACKAGES_MAX" } } });
    expect(asked).toHaveLength(4);
  });

  test("with npm off (a budget of no packages) no request leaves, whatever its path", async () => {
    const { asked, inner } = fakeRegistry(() => "{}");
    const budget = new NpmBudget({ BUNDLE_NPM_PACKAGES_MAX: 0 });
    for (const path of ["x/-/1", "left-pad/-/left-pad-1.3.0.tgz", "left-pad", "@scope%2fb"]) {
      await expectCode(guardedFetch(inner, budget, `https://registry.npmjs.org/${path}`), "RESOURCE_EXHAUSTED", path);
    }
    expect(asked).toEqual([]);
  });

  test("downloads stop at BUNDLE_NPM_DOWNLOAD_MAX_BYTES, declared or streamed", async () => {
    const streamed = new NpmBudget({ BUNDLE_NPM_DOWNLOAD_MAX_BYTES: 10_000 });
    const response = await guardedFetch(fakeRegistry(() => streamOf(50_000)).inner, streamed, "https://registry.npmjs.org/big");
    const error = await expectCode(response.arrayBuffer(), "RESOURCE_EXHAUSTED");
    expect(error.details).toMatchObject({ limit: "BUNDLE_NPM_DOWNLOAD_MAX_BYTES" });
    expect(streamed.downloadedBytes).toBeLessThanOrEqual(10_000 + 1024);

    const declared = new NpmBudget({ BUNDLE_NPM_DOWNLOAD_MAX_BYTES: 10_000 });
    const { inner } = fakeRegistry(() => new Uint8Array(20_000), { "content-length": "20000" });
    expect((await expectCode(guardedFetch(inner, declared, "https://registry.npmjs.org/big"), "RESOURCE_EXHAUSTED")).details).toMatchObject({ limit: "BUNDLE_NPM_DOWNLOAD_MAX_BYTES" });
  });

  test("a gzip bomb inflates no further than BUNDLE_NPM_UNPACKED_MAX_BYTES inside a build, and is untouched outside one", async () => {
    const bomb = await new Response(streamOf(8 * 1024 * 1024, 65_536).pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
    expect(bomb.byteLength).toBeLessThan(100_000);
    const inflate = () => new Response(new Blob([bomb]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();

    const budget = new NpmBudget({ BUNDLE_NPM_UNPACKED_MAX_BYTES: 1024 * 1024 });
    const error = await withNpmBudget(budget, () => expectCode(inflate(), "RESOURCE_EXHAUSTED"));
    expect(error.details).toMatchObject({ limit: "BUNDLE_NPM_UNPACKED_MAX_BYTES" });
    expect(budget.unpackedBytes).toBeLessThan(2 * 1024 * 1024);
    expect((await inflate()).byteLength).toBe(8 * 1024 * 1024);
  });
});
