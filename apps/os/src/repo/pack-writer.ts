import { readObject } from "isomorphic-git";
import type { ObjectStore } from "./repo-tree.ts";

/**
 * Writes the pack a fetch answers. Objects that sit whole (not as deltas) in a stored pack are
 * copied byte for byte, compressed as they are, the way git's own pack-objects reuses them;
 * only loose objects and deltas are read and compressed again. The trailer is a native SHA-1.
 */
const TYPES: Record<string, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };

/** Where each whole object of one stored pack lies: `[start, end)` of its entry. */
interface PackEntries {
  pack: Uint8Array;
  entries: Map<string, [number, number]>;
}

/** Stored packs never change (a new push adds a new one): their parsed indexes are kept. */
export class PackReader {
  readonly #store: ObjectStore;
  readonly #packs = new Map<string, PackEntries>();

  constructor(store: ObjectStore) {
    this.#store = store;
  }

  /** The raw entry of `oid` in a stored pack, when it is stored whole. */
  async rawEntry(oid: string): Promise<Uint8Array | undefined> {
    for (const packed of await this.#all()) {
      const range = packed.entries.get(oid);
      if (range) return packed.pack.subarray(range[0], range[1]);
    }
    return undefined;
  }

  async #all(): Promise<PackEntries[]> {
    const dir = `${this.#store.gitdir}/objects/pack`;
    let names: string[];
    try {
      names = (await this.#store.fs.promises.readdir(dir)) as string[];
    } catch {
      return [];
    }
    const out: PackEntries[] = [];
    for (const name of names) {
      // A pack still in the stage may yet be refused: only stored packs are read (and kept).
      if (!name.endsWith(".idx") || this.#store.fs.isStaged(`${dir}/${name}`)) continue;
      let packed = this.#packs.get(name);
      if (!packed) {
        const idx = (await this.#store.fs.promises.readFile(`${dir}/${name}`)) as Uint8Array;
        const pack = (await this.#store.fs.promises.readFile(`${dir}/${name.replace(/\.idx$/, ".pack")}`)) as Uint8Array;
        packed = { pack, entries: wholeEntries(idx, pack) };
        this.#packs.set(name, packed);
      }
      out.push(packed);
    }
    return out;
  }
}

/** Reads a version 2 pack index and keeps the entries that are whole objects (types 1-4). */
function wholeEntries(idx: Uint8Array, pack: Uint8Array): Map<string, [number, number]> {
  const view = new DataView(idx.buffer, idx.byteOffset, idx.byteLength);
  if (view.getUint32(0) !== 0xff744f63 || view.getUint32(4) !== 2) return new Map();
  const count = view.getUint32(8 + 255 * 4);
  const names = 8 + 256 * 4;
  const offsets = names + count * 20 + count * 4;
  const large = offsets + count * 4;
  const rows: Array<[string, number]> = [];
  for (let i = 0; i < count; i++) {
    let offset = view.getUint32(offsets + i * 4);
    if (offset & 0x80000000) offset = Number(view.getBigUint64(large + (offset & 0x7fffffff) * 8));
    rows.push([hex(idx.subarray(names + i * 20, names + i * 20 + 20)), offset]);
  }
  const sorted = rows.map(([, offset]) => offset).toSorted((a, b) => a - b);
  const ends = new Map<number, number>();
  for (let i = 0; i < sorted.length; i++) ends.set(sorted[i] as number, sorted[i + 1] ?? pack.byteLength - 20);
  const entries = new Map<string, [number, number]>();
  for (const [oid, offset] of rows) {
    const type = ((pack[offset] ?? 0) >> 4) & 7;
    if (type >= 1 && type <= 4) entries.set(oid, [offset, ends.get(offset) ?? offset]);
  }
  return entries;
}

function hex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}

/** A pack entry's header: type and inflated size, git's variable-length encoding. */
function entryHeader(type: number, size: number): Uint8Array {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return new Uint8Array(bytes);
}

async function zlib(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The pack holding `oids`, in that order. */
export async function writePack(store: ObjectStore, reader: PackReader, oids: string[]): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const head = new Uint8Array(12);
  head.set([0x50, 0x41, 0x43, 0x4b]);
  new DataView(head.buffer).setUint32(4, 2);
  new DataView(head.buffer).setUint32(8, oids.length);
  parts.push(head);
  for (const oid of oids) {
    const raw = await reader.rawEntry(oid);
    if (raw) {
      parts.push(raw);
      continue;
    }
    const { type, object } = await readObject({ ...store, oid, format: "content" });
    const content = object as Uint8Array;
    parts.push(entryHeader(TYPES[type] ?? 3, content.byteLength), await zlib(content));
  }
  const total = parts.reduce((sum, part) => sum + part.byteLength, 0);
  const out = new Uint8Array(total + 20);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  out.set(new Uint8Array(await crypto.subtle.digest("SHA-1", out.subarray(0, total))), total);
  return out;
}
