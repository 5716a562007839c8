import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import { unwrapCoded, type Coded } from "../api/coded-result.ts";
import { BLOB, bytes, commitOf, deltaOf, gitObject, ofsDeltaEntry, packOf, refDeltaEntry, treeOf } from "../../test/git-packs.ts";
import { RepoStore } from "./repo-store.ts";

// A repository's stored packs together may be far larger than its isolate: their objects are read
// one entry at a time, by range, and a fetch's pack is streamed.

const actor = { principal: "tester", origin: "/" };
let counter = 0;

async function open<T>(answer: Promise<Coded<T>>): Promise<T> {
  return unwrapCoded(await answer);
}

async function freshRepo() {
  counter += 1;
  const stub = env.REPO.getByName(`prj_packed${Date.now()}${counter}:/repos/packed`);
  await open(stub.create(actor));
  return stub;
}

/** Text of `lines` numbered lines: deltas between versions of it copy most of it. */
function lines(count: number, tag: string): Uint8Array {
  return bytes(Array.from({ length: count }, (_, i) => `${tag} line ${i} of a file that changes a little between versions\n`).join(""));
}

function randomBytes(size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let at = 0; at < size; at += 65_536) crypto.getRandomValues(out.subarray(at, Math.min(size, at + 65_536)));
  return out;
}

const text = (data: Uint8Array) => new TextDecoder().decode(data);

describe("objects of stored packs", () => {
  test("whole, ofs-delta, ref-delta in the pack, ref-delta on a loose object and on an earlier pack's delta all read back; a fetch of them indexes elsewhere", async () => {
    const stub = await freshRepo();
    const loose = lines(40, "loose");
    const first = await open(stub.commit({ message: "loose", files: { "loose.txt": text(loose) } }, actor));
    const looseBlob = await gitObject(BLOB, loose);

    // One pack: a whole blob, a delta on it by offset, a delta on that delta by id, and a delta on the loose blob.
    const a = await gitObject(BLOB, lines(200, "a"));
    const b = new Uint8Array([...a.content, ...bytes("b adds a line\n")]);
    const c = new Uint8Array([...b, ...bytes("c adds another\n")]);
    const d = new Uint8Array([...loose, ...bytes("d grows the loose file\n")]);
    const [bId, cId, dId] = await Promise.all([b, c, d].map(async (content) => (await gitObject(BLOB, content)).oid));
    // b follows a directly: its base lies a's whole entry back.
    const bFixed = await ofsDeltaEntry(deltaOf(a.content, b), a.header.length + a.data.byteLength);
    const cEntry = await refDeltaEntry(deltaOf(b, c), bId as string);
    const dEntry = await refDeltaEntry(deltaOf(loose, d), looseBlob.oid);
    const tree1 = await treeOf([["a.txt", a.oid], ["b.txt", bId as string], ["c.txt", cId as string], ["d.txt", dId as string], ["loose.txt", looseBlob.oid]]);
    const commit1 = await commitOf(tree1.oid, [first.commit], "deltas");
    const pack1 = await packOf([a, bFixed, cEntry, dEntry, tree1, commit1]);
    expect(await open(stub.receivePack({ commands: [{ from: first.commit, to: commit1.oid, ref: "refs/heads/main" }], pack: pack1 }, actor))).toEqual([{ ref: "refs/heads/main" }]);

    // A thin pack, as git pushes one: a delta on an object only the stored pack holds (itself a delta).
    const e = new Uint8Array([...c, ...bytes("e, in a later push\n")]);
    const eId = (await gitObject(BLOB, e)).oid;
    const tree2 = await treeOf([["a.txt", a.oid], ["b.txt", bId as string], ["c.txt", cId as string], ["d.txt", dId as string], ["e.txt", eId], ["loose.txt", looseBlob.oid]]);
    const commit2 = await commitOf(tree2.oid, [commit1.oid], "thin");
    const pack2 = await packOf([await refDeltaEntry(deltaOf(c, e), cId as string), tree2, commit2]);
    expect(await open(stub.receivePack({ commands: [{ from: commit1.oid, to: commit2.oid, ref: "refs/heads/main" }], pack: pack2 }, actor))).toEqual([{ ref: "refs/heads/main" }]);

    const expected = { "a.txt": a.content, "b.txt": b, "c.txt": c, "d.txt": d, "e.txt": e, "loose.txt": loose };
    await runInDurableObject(stub, async (_instance, state) => {
      // A store built afresh (as after a restart): nothing of the packs is in memory yet.
      const store = new RepoStore(state.storage);
      for (const [path, content] of Object.entries(expected)) expect(await store.readFile("main", path)).toEqual(content);
      expect(store.packs.read(cId as string)).toEqual({ type: "blob", content: c });
      expect(store.packs.read(commit2.oid)).toEqual({ type: "commit", content: commit2.content });
      // Deltas are rebuilt; only whole entries are copied raw into a fetch's pack.
      expect(store.packs.rawEntry(a.oid)?.byteLength).toBe(a.header.length + a.data.byteLength);
      expect(store.packs.rawEntry(cId as string)).toBeUndefined();
      expect(store.packs.read(looseBlob.oid)).toBeUndefined();
      expect(await store.log("main", 10)).toHaveLength(3);
    });

    // Everything main reaches, as a fetch streams it, is a pack another repository indexes whole.
    const fetched = new Uint8Array(await new Response((await open(stub.uploadPack({ wants: [commit2.oid], haves: [] }))).pack).arrayBuffer());
    const trailer = new Uint8Array(await crypto.subtle.digest("SHA-1", fetched.subarray(0, -20)));
    expect(fetched.subarray(-20)).toEqual(trailer);
    const copy = await freshRepo();
    expect(await open(copy.receivePack({ commands: [{ from: null, to: commit2.oid, ref: "refs/heads/main" }], pack: fetched }, actor))).toEqual([{ ref: "refs/heads/main" }]);
    for (const [path, content] of Object.entries(expected)) expect(await open(copy.readFile({ ref: "main", path }))).toEqual(text(content));
  });

  test("reading one file reads its own entries, not the pack around them; a fetch streams the pack in parts", async () => {
    const stub = await freshRepo();
    const big = await gitObject(BLOB, randomBytes(3_000_000));
    const small = await gitObject(BLOB, bytes("small"));
    const tree = await treeOf([["big.bin", big.oid], ["small.txt", small.oid]]);
    const commit = await commitOf(tree.oid, [], "one pack");
    const pack = await packOf([big, small, tree, commit]);
    expect(await open(stub.receivePack({ commands: [{ from: null, to: commit.oid, ref: "refs/heads/main" }], pack }, actor))).toEqual([{ ref: "refs/heads/main" }]);
    await runInDurableObject(stub, async (_instance, state) => {
      const store = new RepoStore(state.storage);
      expect(text(await store.readFile("main", "small.txt"))).toBe("small");
      // The index, the commit, the tree and the blob: a few hundred bytes, not 3 MB.
      expect(store.fs.bytesRead).toBeLessThan(16_384);
      const before = store.fs.bytesRead;
      expect((await store.readFile("main", "big.bin")).byteLength).toBe(3_000_000);
      expect(store.fs.bytesRead - before).toBeGreaterThan(3_000_000);
      expect(store.fs.bytesRead - before).toBeLessThan(3_100_000);
    });
    const answer = await open(stub.uploadPack({ wants: [commit.oid], haves: [] }));
    const reader = answer.pack.getReader();
    const parts: number[] = [];
    for (let read = await reader.read(); !read.done; read = await reader.read()) parts.push(read.value.byteLength);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.reduce((sum, size) => sum + size, 0)).toBe(pack.byteLength);
  });
});
