import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { releaseAnswer } from "./runner-answer-release.ts";

// oxlint-disable typescript/no-explicit-any -- answers over RPC are what the callee made them

// A callee in an isolate of its own, so its answers cross RPC as the runner's do.
const MODULE = `import { RpcTarget, WorkerEntrypoint } from "cloudflare:workers";
let disposed = 0;
class Door extends RpcTarget {
  knock() { return "open"; }
  [Symbol.dispose]() { disposed++; }
}
export default class extends WorkerEntrypoint {
  plain() { return { ok: true, value: { n: 1, list: [1, "two"], when: new Date(0) } }; }
  live() { return { ok: true, value: { door: new Door(), nested: [{ door: new Door() }], read: () => "read", byName: new Map([["d", new Door()]]) } }; }
  unseatable() { return { ok: true, value: { doors: new Set([new Door()]) } }; }
  streamed() { return { ok: true, value: new Response(new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode("body")); c.close(); } })) }; }
  disposed() { return disposed; }
}`;

function callee(): any {
  return env.LOADER.get("runner-answer-release-test", () => ({
    compatibilityDate: "2026-08-01",
    mainModule: "main.js",
    modules: { "main.js": MODULE },
  })).getEntrypoint();
}

describe("releaseAnswer", () => {
  test("disposes an answer of plain data, which stays readable", async () => {
    const answer = await callee().plain();
    expect(typeof answer[Symbol.dispose]).toBe("function");
    releaseAnswer(answer);
    expect(answer.value).toEqual({ n: 1, list: [1, "two"], when: new Date(0) });
  });

  test("re-seats stubs and functions as duplicates first: they keep working, and let go when disposed", async () => {
    const entry = callee();
    const before: number = await entry.disposed();
    const answer = await entry.live();
    const { door } = answer.value;
    releaseAnswer(answer);
    expect(answer.value.door).not.toBe(door);
    expect(await answer.value.door.knock()).toBe("open");
    expect(await answer.value.nested[0].door.knock()).toBe("open");
    expect(await answer.value.read()).toBe("read");
    expect(await answer.value.byName.get("d").knock()).toBe("open");
    // The originals went with the answer: disposing the duplicates leaves the callee's doors unheld.
    await expect(Promise.resolve().then(() => door.knock())).rejects.toThrow(/disposed/);
    answer.value.door[Symbol.dispose]();
    answer.value.nested[0].door[Symbol.dispose]();
    answer.value.byName.get("d")[Symbol.dispose]();
    await expect.poll(() => entry.disposed(), { timeout: 5_000 }).toBe(before + 3);
  });

  test("leaves an answer whose stubs it cannot re-seat (a Set member) as it is", async () => {
    const answer = await callee().unseatable();
    releaseAnswer(answer);
    const [door] = [...answer.value.doors];
    expect(await door.knock()).toBe("open");
  });

  test("a Response's body still streams after its answer is let go", async () => {
    const answer = await callee().streamed();
    releaseAnswer(answer);
    expect(await (answer.value as Response).text()).toBe("body");
  });
});
