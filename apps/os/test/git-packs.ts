/**
 * Git objects and packs built by hand, for tests that need a pack git itself would not send (a
 * hostile one) or one with a given shape (deltas of each kind, objects in a given order).
 */

export const COMMIT = 1;
export const TREE = 2;
export const BLOB = 3;
export const OFS_DELTA = 6;
export const REF_DELTA = 7;
const TYPE_NAMES = { [COMMIT]: "commit", [TREE]: "tree", [BLOB]: "blob" } as const;

export const bytes = (text: string) => new TextEncoder().encode(text);

/** A pack entry: its header bytes and its deflated data. */
export interface PackEntry {
  header: number[];
  data: Uint8Array;
}

export async function deflated(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([data]).stream().pipeThrough(new CompressionStream("deflate"))).arrayBuffer());
}

/** A pack object's header: its type and the size it declares. */
export function objectHeader(type: number, size: number): number[] {
  const out: number[] = [];
  let byte = (type << 4) | (size & 15);
  for (let rest = Math.floor(size / 16); rest > 0; rest = Math.floor(rest / 128)) {
    out.push(byte | 0x80);
    byte = rest & 0x7f;
  }
  out.push(byte);
  return out;
}

export function varint(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  for (; rest >= 0x80; rest = Math.floor(rest / 128)) out.push((rest & 0x7f) | 0x80);
  out.push(rest);
  return out;
}

/** A version 2 pack of the given entries, with its SHA-1 trailer. */
export async function packOf(objects: PackEntry[]): Promise<Uint8Array> {
  const head = new Uint8Array([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, 0]);
  new DataView(head.buffer).setUint32(8, objects.length);
  const parts = [head, ...objects.flatMap(({ header, data }) => [new Uint8Array(header), data])];
  const body = new Uint8Array(await new Blob(parts).arrayBuffer());
  const sha = new Uint8Array(await crypto.subtle.digest("SHA-1", body));
  return new Uint8Array(await new Blob([body, sha]).arrayBuffer());
}

/** One git object of a test pack: its id, and its whole entry in a pack. */
export async function gitObject(type: typeof COMMIT | typeof TREE | typeof BLOB, content: Uint8Array): Promise<{ oid: string; content: Uint8Array } & PackEntry> {
  const framed = new Uint8Array(await new Blob([bytes(`${TYPE_NAMES[type]} ${content.byteLength}\0`), content]).arrayBuffer());
  const oid = [...new Uint8Array(await crypto.subtle.digest("SHA-1", framed))].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return { oid, content, header: objectHeader(type, content.byteLength), data: await deflated(content) };
}

export const binaryId = (oid: string) => new Uint8Array(oid.match(/../g)?.map((pair) => parseInt(pair, 16)) ?? []);

/** A tree of files (names in git's order: sorted), each `[name, blob id]`. */
export async function treeOf(files: Array<[string, string]>) {
  const parts = files.toSorted(([a], [b]) => (a < b ? -1 : 1)).flatMap(([name, oid]) => [bytes(`100644 ${name}\0`), binaryId(oid)]);
  return gitObject(TREE, new Uint8Array(await new Blob(parts).arrayBuffer()));
}

/** A commit of `tree` on `parents`. */
export async function commitOf(tree: string, parents: string[], message: string) {
  const person = "tester <tester@iterate.invalid> 1700000000 +0000";
  const lines = [`tree ${tree}`, ...parents.map((parent) => `parent ${parent}`), `author ${person}`, `committer ${person}`, "", message, ""];
  return gitObject(COMMIT, bytes(lines.join("\n")));
}

/** A pack of one commit (no parent) whose tree holds one file named `name`; answers the pack and the commit's id. */
export async function onePathCommit(name: string, text: string): Promise<{ pack: Uint8Array; commit: string }> {
  const blob = await gitObject(BLOB, bytes(text));
  const tree = await treeOf([[name, blob.oid]]);
  const commit = await commitOf(tree.oid, [], "hostile");
  return { pack: await packOf([blob, tree, commit]), commit: commit.oid };
}

/**
 * A git delta that rebuilds `result` from `base`: one copy of the prefix they share, then the rest
 * inserted (127 bytes an instruction).
 */
export function deltaOf(base: Uint8Array, result: Uint8Array): Uint8Array {
  let shared = 0;
  while (shared < base.byteLength && shared < result.byteLength && shared < 0xffffff && base[shared] === result[shared]) shared += 1;
  const out = [...varint(base.byteLength), ...varint(result.byteLength)];
  if (shared > 0) out.push(0x80 | 0x10 | 0x20 | 0x40, shared & 0xff, (shared >> 8) & 0xff, (shared >> 16) & 0xff);
  for (let at = shared; at < result.byteLength; at += 127) {
    const piece = result.subarray(at, at + 127);
    out.push(piece.byteLength, ...piece);
  }
  return new Uint8Array(out);
}

/** A delta entry on the object `back` bytes before it in the same pack. */
export async function ofsDeltaEntry(delta: Uint8Array, back: number): Promise<PackEntry> {
  // git's offset encoding: each byte after the first stands for one more than its bits say.
  const encoded = [back & 0x7f];
  for (let rest = Math.floor(back / 128); rest > 0; rest = Math.floor(rest / 128)) {
    rest -= 1;
    encoded.unshift(0x80 | (rest & 0x7f));
  }
  return { header: [...objectHeader(OFS_DELTA, delta.byteLength), ...encoded], data: await deflated(delta) };
}

/** A delta entry on the object `base` names (in this pack or already stored). */
export async function refDeltaEntry(delta: Uint8Array, base: string): Promise<PackEntry> {
  return { header: [...objectHeader(REF_DELTA, delta.byteLength), ...binaryId(base)], data: await deflated(delta) };
}
