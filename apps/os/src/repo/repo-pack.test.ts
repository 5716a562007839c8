import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { unwrapCoded, type Coded } from "../api/coded-result.ts";

// Pushed packs are untrusted bytes: whatever they hold, a push is answered with each ref's status
// (git's `ng <ref> <reason>`), never an exception the Durable Object would log with its stack.

let counter = 0;
const actor = { principal: "tester", origin: "/" };
const PUSH = [{ from: null, to: "1".repeat(40), ref: "refs/heads/main" }];

async function open<T>(answer: Promise<Coded<T>>): Promise<T> {
  return unwrapCoded(await answer);
}

async function freshRepo() {
  counter += 1;
  const stub = env.REPO.getByName(`prj_pack${Date.now()}${counter}:/repos/pack`);
  await open(stub.create(actor));
  return stub;
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe("hostile packs", () => {
  test("a pack that is not one (bad magic, bad version, truncated) is refused coded for every ref, and nothing is kept", async () => {
    const stub = await freshRepo();
    for (const pack of [bytes("garbage"), new Uint8Array(100), bytes("PACK\0\0\0\x09\0\0\0\x01")]) {
      const statuses = await open(stub.receivePack({ commands: PUSH, pack }, actor));
      expect(statuses).toEqual([{ ref: "refs/heads/main", error: expect.stringMatching(/^\[INVALID_ARGUMENT\] the pushed pack could not be read: /) }]);
    }
    // A pack cut short after its header is read as far as it goes: the ref's commit is missing.
    const truncated = await open(stub.receivePack({ commands: PUSH, pack: bytes("PACK\0\0\0\x02\0\0\0\x01\x35") }, actor));
    expect(truncated).toEqual([{ ref: "refs/heads/main", error: "missing necessary objects" }]);
    expect(await open(stub.branches())).toEqual([]);
    expect((await open(stub.describe())).sizeBytes).toBe(0);
  });
});
