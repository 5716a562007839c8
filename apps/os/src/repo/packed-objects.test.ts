import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { unwrapCoded, type Coded } from "../api/coded-result.ts";
import { BLOB, bytes, commitOf, deltaOf, gitObject, objectHeader, ofsDeltaEntry, packOf, refDeltaEntry, treeOf, varint, deflated, OFS_DELTA } from "../../test/git-packs.ts";
import { LIMITS } from "../limits.ts";
import { DEPTH_KEPT } from "./packed-objects.ts";
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

// Small pushes are kept as loose rows (REPO_PACK_MIN_BYTES): these tests keep every pack a pack.
const saved = { ...LIMITS };
beforeEach(() => {
  (LIMITS as Record<string, number>).REPO_PACK_MIN_BYTES = 0;
});
afterEach(() => Object.assign(LIMITS, saved));

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

  test("reading one file reads the chunks that hold its entries, not the pack; a fetch streams the pack in parts", async () => {
    const stub = await freshRepo();
    const big = await gitObject(BLOB, randomBytes(3_000_000));
    const small = await gitObject(BLOB, bytes("small"));
    const tree = await treeOf([["big.bin", big.oid], ["small.txt", small.oid]]);
    const commit = await commitOf(tree.oid, [], "one pack");
    const pack = await packOf([small, tree, commit, big]);
    expect(await open(stub.receivePack({ commands: [{ from: null, to: commit.oid, ref: "refs/heads/main" }], pack }, actor))).toEqual([{ ref: "refs/heads/main" }]);
    await runInDurableObject(stub, async (_instance, state) => {
      const store = new RepoStore(state.storage);
      expect(text(await store.readFile("main", "small.txt"))).toBe("small");
      // The index and the first 1 MiB chunk (the commit, the tree and the blob), not the 3 MB pack.
      expect(store.fs.bytesRead).toBeLessThan(1_048_576 + 16_384);
      expect((await store.readFile("main", "big.bin")).byteLength).toBe(3_000_000);
      // Each chunk was read once: the pack and its index, no more.
      expect(store.fs.bytesRead).toBeLessThan(pack.byteLength + 16_384);
    });
    const answer = await open(stub.uploadPack({ wants: [commit.oid], haves: [] }));
    const reader = answer.pack.getReader();
    const parts: number[] = [];
    for (let read = await reader.read(); !read.done; read = await reader.read()) parts.push(read.value.byteLength);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.reduce((sum, size) => sum + size, 0)).toBe(pack.byteLength);
  });
});


/** A repository whose main holds one whole blob `y.txt` (pushed), and that blob. */
async function withStoredBlob() {
  const stub = await freshRepo();
  const y = await gitObject(BLOB, lines(100, "y"));
  const tree = await treeOf([["y.txt", y.oid]]);
  const commit = await commitOf(tree.oid, [], "y");
  expect(await open(stub.receivePack({ commands: [{ from: null, to: commit.oid, ref: "refs/heads/main" }], pack: await packOf([y, tree, commit]) }, actor))).toEqual([{ ref: "refs/heads/main" }]);
  return { stub, y, head: commit.oid };
}

const pushTo = (from: string, to: string) => [{ from, to, ref: "refs/heads/main" }];
const refusedRead = (error: string) => [{ ref: "refs/heads/main", error: expect.stringContaining(error) }];

describe("a push is read back before it is kept", () => {
  test("two id deltas on each other, one also stored before: each reads, never around the loop", async () => {
    const { stub, y, head } = await withStoredBlob();
    const x = new Uint8Array([...y.content, ...bytes("x adds a line\n")]);
    const xId = (await gitObject(BLOB, x)).oid;
    // x on y (stored before), and y again, on x.
    const tree = await treeOf([["x.txt", xId], ["y.txt", y.oid]]);
    const commit = await commitOf(tree.oid, [head], "loop");
    const pack = await packOf([await refDeltaEntry(deltaOf(y.content, x), y.oid), await refDeltaEntry(deltaOf(x, y.content), xId), tree, commit]);
    expect(await open(stub.receivePack({ commands: pushTo(head, commit.oid), pack }, actor))).toEqual([{ ref: "refs/heads/main" }]);
    await runInDurableObject(stub, async (_instance, state) => {
      const store = new RepoStore(state.storage);
      expect(await store.readFile("main", "x.txt")).toEqual(x);
      expect(await store.readFile("main", "y.txt")).toEqual(y.content);
      expect(store.packs.read(y.oid)).toEqual({ type: "blob", content: y.content });
    });
    const fetched = await new Response((await open(stub.uploadPack({ wants: [commit.oid], haves: [] }))).pack).arrayBuffer();
    const copy = await freshRepo();
    expect(await open(copy.receivePack({ commands: [{ from: null, to: commit.oid, ref: "refs/heads/main" }], pack: new Uint8Array(fetched) }, actor))).toEqual([{ ref: "refs/heads/main" }]);
  });

  test("a chain longer than DEPTH_KEPT (counted through earlier pushes) is kept whole where it passes it, so no read walks a longer one", async () => {
    const { stub, y, head } = await withStoredBlob();
    // 52 versions of one file, each an id delta on the one before: the first on the stored y.
    const versions: Uint8Array[] = [];
    const entries = [];
    let previous = { content: y.content, oid: y.oid };
    for (let i = 0; i < DEPTH_KEPT + 2; i++) {
      const content = new Uint8Array([...previous.content, ...bytes(`version ${i}\n`)]);
      const oid = (await gitObject(BLOB, content)).oid;
      entries.push(await refDeltaEntry(deltaOf(previous.content, content), previous.oid));
      versions.push(content);
      previous = { content, oid };
    }
    const ids = await Promise.all(versions.map(async (content) => (await gitObject(BLOB, content)).oid));
    const tree = await treeOf([["y.txt", previous.oid]]);
    const commit = await commitOf(tree.oid, [head], "many versions");
    const pack = await packOf([...entries, tree, commit]);
    (LIMITS as Record<string, number>).GIT_PUSH_KEPT_WHOLE_MAX_BYTES = 100;
    const refused = await open(stub.receivePack({ commands: pushTo(head, commit.oid), pack }, actor));
    expect(refused).toEqual(refusedRead("more than 100 bytes of this push must be kept as whole objects"));
    (LIMITS as Record<string, number>).GIT_PUSH_KEPT_WHOLE_MAX_BYTES = saved.GIT_PUSH_KEPT_WHOLE_MAX_BYTES;
    expect(await open(stub.receivePack({ commands: pushTo(head, commit.oid), pack }, actor))).toEqual([{ ref: "refs/heads/main" }]);
    await runInDurableObject(stub, async (_instance, state) => {
      const store = new RepoStore(state.storage);
      const loose = (oid: string) => store.fs.fileSize(`/git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`) !== undefined;
      // Depth 50 (the 50th version) stays a delta; depth 51 is kept whole, and the one after starts again at 1.
      expect(ids.map(loose)).toEqual(ids.map((_, i) => i === DEPTH_KEPT));
      expect(await store.readFile("main", "y.txt")).toEqual(versions.at(-1));
      for (const [i, oid] of ids.entries()) expect(store.packs.read(oid)?.content).toEqual(versions[i]);
    });
  });

  test("bytes between entries or before the trailer refuse the push (a fetch would copy them), and nothing is kept", async () => {
    const stub = await freshRepo();
    const blob = await gitObject(BLOB, bytes("z"));
    const tree = await treeOf([["z.txt", blob.oid]]);
    const commit = await commitOf(tree.oid, [], "junk");
    const junk = { header: [] as number[], data: bytes("junk between entries") };
    for (const entries of [[blob, junk, tree, commit], [blob, tree, commit, junk]]) {
      const statuses = await open(stub.receivePack({ commands: [{ from: null, to: commit.oid, ref: "refs/heads/main" }], pack: await packOf(entries) }, actor));
      expect(statuses[0]?.error).toMatch(/^\[INVALID_ARGUMENT\] the pushed pack could not be read/);
    }
    expect(await open(stub.branches())).toEqual([]);
    expect((await open(stub.describe())).sizeBytes).toBe(0);
  });

  test("numbers isomorphic-git reads in 32 bits (a delta's distance back, the size it rebuilds) are read whole: the push is refused, never kept unreadable", async () => {
    const stub = await freshRepo();
    const a = await gitObject(BLOB, lines(50, "a"));
    const b = new Uint8Array([...a.content, ...bytes("more\n")]);
    const bId = (await gitObject(BLOB, b)).oid;
    const tree = await treeOf([["a.txt", a.oid], ["b.txt", bId]]);
    const commit = await commitOf(tree.oid, [], "wrapped");
    // The distance back plus 2^32: the same distance to a reader that wraps at 32 bits.
    const far = await ofsDeltaEntry(deltaOf(a.content, b), 2 ** 32 + a.header.length + a.data.byteLength);
    // A delta whose rebuilt size is padded with high bytes: 2^32 more than it rebuilds, read whole.
    const delta = deltaOf(a.content, b);
    const sizes = [...varint(a.content.byteLength), ...varint(b.byteLength)];
    const padded = [...varint(a.content.byteLength), ...varint(2 ** 32 + b.byteLength)];
    const huge = new Uint8Array([...padded, ...delta.subarray(sizes.length)]);
    const hugeEntry = { header: [...objectHeader(OFS_DELTA, huge.byteLength), a.header.length + a.data.byteLength], data: await deflated(huge) };
    for (const entry of [far, hugeEntry]) {
      const statuses = await open(stub.receivePack({ commands: [{ from: null, to: commit.oid, ref: "refs/heads/main" }], pack: await packOf([a, entry, tree, commit]) }, actor));
      expect(statuses[0]?.error).toMatch(/^\[INVALID_ARGUMENT\] /);
    }
    expect(await open(stub.branches())).toEqual([]);
    expect((await open(stub.describe())).sizeBytes).toBe(0);
  });

  test("a whole entry whose header pads its size (git cannot read it back once copied into a clone) refuses the push", async () => {
    const stub = await freshRepo();
    const blob = await gitObject(BLOB, bytes("padded"));
    const tree = await treeOf([["p.txt", blob.oid]]);
    const commit = await commitOf(tree.oid, [], "padded");
    // Size 6 in the first byte, then a continuation byte that adds nothing.
    const padded = { header: [0x80 | (BLOB << 4) | 6, 0x00], data: blob.data };
    const statuses = await open(stub.receivePack({ commands: [{ from: null, to: commit.oid, ref: "refs/heads/main" }], pack: await packOf([padded, tree, commit]) }, actor));
    expect(statuses).toEqual(refusedRead("pads its header"));
    expect(await open(stub.branches())).toEqual([]);
  });

  test("an entry compressed as gzip, not zlib (git cannot read it once copied into a clone), refuses the push", async () => {
    const stub = await freshRepo();
    const blob = await gitObject(BLOB, bytes("gzipped"));
    const tree = await treeOf([["g.txt", blob.oid]]);
    const commit = await commitOf(tree.oid, [], "gzip");
    const gzipped = new Uint8Array(await new Response(new Blob([blob.content]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
    const statuses = await open(stub.receivePack({ commands: [{ from: null, to: commit.oid, ref: "refs/heads/main" }], pack: await packOf([{ header: blob.header, data: gzipped }, tree, commit]) }, actor));
    expect(statuses).toEqual(refusedRead("the pushed pack could not be read"));
    expect(await open(stub.branches())).toEqual([]);
  });

  test("REPO_PACKED_OBJECTS_MAX: a push that would bring the pushed packs past it is refused, and nothing is kept", async () => {
    const { stub, head } = await withStoredBlob();
    const blob = await gitObject(BLOB, bytes("one more"));
    const tree = await treeOf([["more.txt", blob.oid]]);
    const commit = await commitOf(tree.oid, [head], "more");
    const pack = await packOf([blob, tree, commit]);
    const size = (await open(stub.describe())).sizeBytes;
    (LIMITS as Record<string, number>).REPO_PACKED_OBJECTS_MAX = 5;
    const statuses = await open(stub.receivePack({ commands: pushTo(head, commit.oid), pack }, actor));
    expect(statuses).toEqual(refusedRead("pushed packs would hold 6 objects, more than 5"));
    expect((await open(stub.describe())).sizeBytes).toBe(size);
    (LIMITS as Record<string, number>).REPO_PACKED_OBJECTS_MAX = 6;
    expect(await open(stub.receivePack({ commands: pushTo(head, commit.oid), pack }, actor))).toEqual([{ ref: "refs/heads/main" }]);
  });
});

describe("REPO_PACK_MIN_BYTES", () => {
  test("a small push is kept as loose rows, no pack: nothing of it stays in memory to read the repository", async () => {
    (LIMITS as Record<string, number>).REPO_PACK_MIN_BYTES = saved.REPO_PACK_MIN_BYTES;
    const stub = await freshRepo();
    const a = await gitObject(BLOB, lines(50, "a"));
    const b = new Uint8Array([...a.content, ...bytes("b\n")]);
    const bId = (await gitObject(BLOB, b)).oid;
    const tree = await treeOf([["a.txt", a.oid], ["b.txt", bId]]);
    const commit = await commitOf(tree.oid, [], "small");
    const pack = await packOf([a, await ofsDeltaEntry(deltaOf(a.content, b), a.header.length + a.data.byteLength), tree, commit]);
    expect(await open(stub.receivePack({ commands: [{ from: null, to: commit.oid, ref: "refs/heads/main" }], pack }, actor))).toEqual([{ ref: "refs/heads/main" }]);
    await runInDurableObject(stub, async (_instance, state) => {
      const store = new RepoStore(state.storage);
      expect(store.fs.storedFiles("/git/objects/pack/")).toEqual([]);
      expect(store.packs.count()).toBe(0);
      expect(await store.readFile("main", "b.txt")).toEqual(b);
      expect(await store.log("main", 10)).toHaveLength(1);
    });
  });

  test("a small push of a delta on a large stored file stays a pack: an edit does not store the file again", async () => {
    (LIMITS as Record<string, number>).REPO_PACK_MIN_BYTES = saved.REPO_PACK_MIN_BYTES;
    const stub = await freshRepo();
    const big = await gitObject(BLOB, randomBytes(300_000));
    const tree = await treeOf([["big.bin", big.oid]]);
    const commit = await commitOf(tree.oid, [], "big");
    expect(await open(stub.receivePack({ commands: [{ from: null, to: commit.oid, ref: "refs/heads/main" }], pack: await packOf([big, tree, commit]) }, actor))).toEqual([{ ref: "refs/heads/main" }]);
    const before = (await open(stub.describe())).sizeBytes;
    const edited = new Uint8Array([...big.content, ...bytes("one more line\n")]);
    const editedId = (await gitObject(BLOB, edited)).oid;
    const tree2 = await treeOf([["big.bin", editedId]]);
    const commit2 = await commitOf(tree2.oid, [commit.oid], "edit");
    const thin = await packOf([await refDeltaEntry(deltaOf(big.content, edited), big.oid), tree2, commit2]);
    expect(await open(stub.receivePack({ commands: pushTo(commit.oid, commit2.oid), pack: thin }, actor))).toEqual([{ ref: "refs/heads/main" }]);
    // The pack and its index, a few kilobytes: not the file again.
    expect((await open(stub.describe())).sizeBytes - before).toBeLessThan(4_096);
    await runInDurableObject(stub, async (_instance, state) => {
      const store = new RepoStore(state.storage);
      // The first push was kept as loose rows (small, whole objects); the edit is the one pack.
      expect(store.fs.storedFiles("/git/objects/pack/").filter((path) => path.endsWith(".idx"))).toHaveLength(1);
      expect(await store.readFile("main", "big.bin")).toEqual(edited);
    });
  });

  test("REPO_PACKS_MAX: past it a push is kept as loose rows, whatever its size", async () => {
    (LIMITS as Record<string, number>).REPO_PACKS_MAX = 1;
    const { stub, y, head } = await withStoredBlob();
    const x = new Uint8Array([...y.content, ...bytes("x\n")]);
    const xId = (await gitObject(BLOB, x)).oid;
    const tree = await treeOf([["x.txt", xId], ["y.txt", y.oid]]);
    const commit = await commitOf(tree.oid, [head], "second pack");
    const pack = await packOf([await refDeltaEntry(deltaOf(y.content, x), y.oid), tree, commit]);
    expect(await open(stub.receivePack({ commands: pushTo(head, commit.oid), pack }, actor))).toEqual([{ ref: "refs/heads/main" }]);
    await runInDurableObject(stub, async (_instance, state) => {
      const store = new RepoStore(state.storage);
      // The first repository pack only; the second push's objects are rows.
      expect(store.fs.storedFiles("/git/objects/pack/").filter((path) => path.endsWith(".idx"))).toHaveLength(1);
      expect(store.fs.fileSize(`/git/objects/${xId.slice(0, 2)}/${xId.slice(2)}`)).toBeGreaterThan(0);
      expect(await store.readFile("main", "x.txt")).toEqual(x);
    });
  });
});
