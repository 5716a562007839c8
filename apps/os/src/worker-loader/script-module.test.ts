import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { scriptModule } from "./script-module.ts";

// The module as the Loader runs it. What the script throws comes back as the answer's `thrown`
// (strings only), never as an exception thrown across the call: workerd prints those with their
// stack, so every failing script was a line in the platform's log.
async function run(source: string): Promise<unknown> {
  const id = `script-module-test:${crypto.randomUUID()}`;
  const worker = env.LOADER.get(id, () => ({
    compatibilityDate: "2026-08-01",
    mainModule: "script.js",
    modules: { "script.js": scriptModule(source, "__guard", 1_000) },
    env: {},
    globalOutbound: null,
  }));
  // oxlint-disable-next-line typescript/no-explicit-any -- the module's entrypoint is the one scriptModule writes
  return (worker.getEntrypoint() as any).run(null);
}

describe("scriptModule", () => {
  test("answers a result as JSON text, and undefined as such", async () => {
    expect(await run("async () => ({ a: 1 })")).toEqual({ json: '{"a":1}' });
    expect(await run("async () => undefined")).toEqual({ undefined: true });
  });

  test("answers what the script throws as strings, whatever it threw, and never rejects", async () => {
    expect(await run("async () => { throw new Error('on fire'); }")).toEqual({ thrown: { message: "on fire" } });
    expect(await run("async () => { throw 'a string'; }")).toEqual({ thrown: { message: "a string" } });
    expect(await run("async () => { throw { message: 'shaped', code: 'TIMEOUT' }; }")).toEqual({ thrown: { message: "shaped", code: "TIMEOUT" } });
    expect(await run("async () => { throw { message: 42, code: 7 }; }")).toEqual({ thrown: { message: "42" } });
    expect(await run("async () => { throw { get message() { throw new Error('no'); }, get code() { throw new Error('no'); } }; }")).toEqual({
      thrown: { message: "the script threw a value that has no message" },
    });
    expect(await run("async () => { throw { message: { toString() { throw new Error('no'); } } }; }")).toEqual({ thrown: { message: "the script threw a value that has no message" } });
    // Failures of the module's own checks are answered the same way.
    expect(await run("42")).toEqual({ thrown: { message: "a script is one function: async (itx) => { ... }" } });
    expect(await run("async () => Symbol('x')")).toEqual({ thrown: { message: "the script's result is not JSON: a symbol has no JSON form" } });
    expect(await run("(() => { throw new Error('at evaluation'); })()")).toEqual({ thrown: { message: "at evaluation" } });
  });
});
