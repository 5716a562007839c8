import { deflate, inflate } from "pako";
import { ItxError } from "iterate/errors";
import { LIMITS } from "../limits.ts";
import type { PackedSource, SqliteFs } from "./sqlite-fs.ts";

/**
 * The objects of a repository's stored packs, read one at a time by range from SQLite: an object
 * costs its own entry (and its delta bases'), never its pack. Packs never change once stored (a
 * push adds a new one), so each index is parsed once and kept: 28 bytes an object.
 */

const PACK_DIR = "/git/objects/pack";
const NAMES: Record<number, ObjectType> = { 1: "commit", 2: "tree", 3: "blob", 4: "tag" };
const OFS_DELTA = 6;
const REF_DELTA = 7;
/** git's own ceiling on a delta chain (`pack.depth` stops at 4095); a longer one is corrupt. */
const DELTA_CHAIN_MAX = 4096;
/** Inflated objects kept to rebuild deltas from: bases are shared, most often the newest ones. */
const BASE_CACHE_BYTES = 8_388_608;

export type ObjectType = "commit" | "tree" | "blob" | "tag";

/** A whole object: its type and content. */
export interface GitObject {
  type: ObjectType;
  content: Uint8Array;
}

/** One stored pack's index (version 2), kept as the bytes it was read as. */
interface PackIndex {
  pack: string;
  idx: Uint8Array;
  view: DataView;
  count: number;
  /** Entry offsets in pack order, to find where each entry ends. */
  sorted: Float64Array;
  /** Where the entries stop: the pack's size less its 20-byte trailer. */
  end: number;
}

/** Where one object's entry lies. */
interface Located {
  index: PackIndex;
  offset: number;
}

export class PackedObjects implements PackedSource {
  readonly #fs: SqliteFs;
  readonly #list: () => string[];
  readonly #indexes = new Map<string, PackIndex>();
  readonly #bases = new Map<string, GitObject>();
  #baseBytes = 0;

  /** `indexes` names the packs' index files: by default every stored one (a push's staged pack is not). */
  constructor(fs: SqliteFs, indexes?: () => string[]) {
    this.#fs = fs;
    this.#list = indexes ?? (() => fs.storedFiles(`${PACK_DIR}/`).filter((path) => path.endsWith(".idx")));
  }

  has(oid: string): boolean {
    return this.#locate(oid) !== undefined;
  }

  async looseFile(oid: string): Promise<Uint8Array | undefined> {
    const object = this.read(oid);
    if (!object) return undefined;
    const head = new TextEncoder().encode(`${object.type} ${object.content.byteLength}\0`);
    const wrapped = new Uint8Array(head.byteLength + object.content.byteLength);
    wrapped.set(head);
    wrapped.set(object.content, head.byteLength);
    // Stored, not compressed: isomorphic-git inflates it at once, and checks its id.
    return deflate(wrapped, { level: 0 });
  }

  /** The object `oid` of a stored pack, rebuilt if it is stored as a delta; undefined when none holds it. */
  read(oid: string): GitObject | undefined {
    const at = this.#locate(oid);
    return at ? this.#objectAt(at.index, at.offset, 0) : undefined;
  }

  /**
   * The raw entry of `oid` (header and deflated data, as a pack carries it) when a stored pack
   * holds it whole, not as a delta: a fetch's pack copies it as it is.
   */
  rawEntry(oid: string): Uint8Array | undefined {
    const at = this.#locate(oid);
    if (!at) return undefined;
    const entry = this.#entry(at.index, at.offset);
    const type = ((entry[0] ?? 0) >> 4) & 7;
    return type >= 1 && type <= 4 ? entry : undefined;
  }

  /**
   * The type of `oid` from entry headers alone (a delta's is its base's), nothing inflated;
   * undefined when these packs do not hold it, or a delta's base lies outside them.
   */
  typeOf(oid: string): ObjectType | undefined {
    const at = this.#locate(oid);
    if (!at) return undefined;
    let { index, offset } = at;
    for (let depth = 0; depth <= DELTA_CHAIN_MAX; depth++) {
      // A header is at most 10 bytes of type and size, then 10 of offset or 20 of base id.
      const head = this.#fs.readRange(index.pack, offset, Math.min(offset + 40, nextOffset(index, offset))) ?? new Uint8Array(0);
      let pos = 0;
      let byte = head[pos++] ?? 0;
      const type = (byte >> 4) & 7;
      while (byte & 0x80) byte = head[pos++] ?? 0;
      if (type === OFS_DELTA) {
        const back = ofsBack(head, pos);
        if (back.value <= 0 || back.value > offset) throw corrupt(`a delta in ${index.pack} points outside it`);
        offset -= back.value;
        continue;
      }
      if (type === REF_DELTA) {
        const base = this.#locate(hex(head.subarray(pos, pos + 20)));
        if (!base) return undefined;
        ({ index, offset } = base);
        continue;
      }
      return NAMES[type];
    }
    throw corrupt(`a delta chain in ${index.pack} is longer than ${DELTA_CHAIN_MAX}`);
  }

  #locate(oid: string): Located | undefined {
    const name = oidBytes(oid);
    if (!name) return undefined;
    for (const index of this.#indexes.values()) {
      const offset = find(index, name);
      if (offset !== undefined) return { index, offset };
    }
    // Not in a pack read so far: a pack stored since then may hold it.
    for (const index of this.#added()) {
      const offset = find(index, name);
      if (offset !== undefined) return { index, offset };
    }
    return undefined;
  }

  /** The indexes of packs listed now and not read before, read now. */
  #added(): PackIndex[] {
    const added: PackIndex[] = [];
    for (const path of this.#list()) {
      if (this.#indexes.has(path)) continue;
      const pack = path.replace(/\.idx$/, ".pack");
      const idx = this.#fs.read(path);
      const size = this.#fs.fileSize(pack);
      if (!idx || size === undefined) continue;
      const index = parseIndex(pack, idx, size);
      this.#indexes.set(path, index);
      added.push(index);
    }
    return added;
  }

  /** The entry at `offset`: from its header to the next entry (or the trailer). */
  #entry(index: PackIndex, offset: number): Uint8Array {
    const next = nextOffset(index, offset);
    const entry = this.#fs.readRange(index.pack, offset, next);
    if (!entry || entry.byteLength !== next - offset) throw corrupt(`${index.pack} is shorter than its index says`);
    return entry;
  }

  #objectAt(index: PackIndex, offset: number, depth: number): GitObject {
    const key = `${index.pack}:${offset}`;
    const cached = this.#bases.get(key);
    if (cached) {
      // Most recently used last: the Map's order is the eviction order.
      this.#bases.delete(key);
      this.#bases.set(key, cached);
      return cached;
    }
    if (depth > DELTA_CHAIN_MAX) throw corrupt(`a delta chain in ${index.pack} is longer than ${DELTA_CHAIN_MAX}`);
    const entry = this.#entry(index, offset);
    let at = 0;
    let byte = entry[at++] ?? 0;
    const type = (byte >> 4) & 7;
    let size = byte & 15;
    for (let scale = 16; byte & 0x80; scale *= 128) {
      byte = entry[at++] ?? 0;
      size += (byte & 0x7f) * scale;
    }
    let base: GitObject | undefined;
    if (type === OFS_DELTA) {
      const back = ofsBack(entry, at);
      at = back.next;
      if (back.value <= 0 || back.value > offset) throw corrupt(`a delta in ${index.pack} points outside it`);
      base = this.#objectAt(index, offset - back.value, depth + 1);
    } else if (type === REF_DELTA) {
      const baseId = hex(entry.subarray(at, at + 20));
      at += 20;
      const found = this.#locate(baseId);
      base = found ? this.#objectAt(found.index, found.offset, depth + 1) : this.#loose(baseId);
      if (!base) throw corrupt(`a delta in ${index.pack} is based on ${baseId}, which the repository does not hold`);
    } else if (!NAMES[type]) {
      throw corrupt(`an entry of ${index.pack} has type ${type}`);
    }
    // Stored objects were held to REPO_FILE_MAX_BYTES when pushed (deltas by what they rebuild).
    if (size > LIMITS.REPO_FILE_MAX_BYTES + 65_536) throw corrupt(`an entry of ${index.pack} declares ${size} bytes`);
    const data = inflated(entry.subarray(at), index.pack);
    if (data.byteLength !== size) throw corrupt(`an entry of ${index.pack} inflates to ${data.byteLength} bytes, not ${size}`);
    const object = base ? { type: base.type, content: applyDelta(base.content, data) } : { type: NAMES[type] as ObjectType, content: data };
    this.#keep(key, object);
    return object;
  }

  /** A loose object stored as a row (a commit made through the API), as a delta's base. */
  #loose(oid: string): GitObject | undefined {
    const file = this.#fs.read(`/git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`);
    if (!file) return undefined;
    const wrapped = inflated(file, oid);
    const space = wrapped.indexOf(0x20);
    const nul = wrapped.indexOf(0);
    const type = new TextDecoder().decode(wrapped.subarray(0, space));
    if (space < 0 || nul < space || !Object.values(NAMES).includes(type as ObjectType)) throw corrupt(`the loose object ${oid} has no header`);
    return { type: type as ObjectType, content: wrapped.subarray(nul + 1) };
  }

  #keep(key: string, object: GitObject): void {
    if (object.content.byteLength > BASE_CACHE_BYTES / 4) return;
    this.#bases.set(key, object);
    this.#baseBytes += object.content.byteLength;
    for (const [oldest, value] of this.#bases) {
      if (this.#baseBytes <= BASE_CACHE_BYTES) break;
      this.#bases.delete(oldest);
      this.#baseBytes -= value.content.byteLength;
    }
  }
}

/** An offset delta's distance back to its base, in git's encoding (each further byte adds one before shifting). */
function ofsBack(bytes: Uint8Array, start: number): { value: number; next: number } {
  let at = start;
  let byte = bytes[at++] ?? 0;
  let value = byte & 0x7f;
  while (byte & 0x80) {
    byte = bytes[at++] ?? 0;
    value = (value + 1) * 128 + (byte & 0x7f);
  }
  return { value, next: at };
}

/** pako throws its message as a string: damage is named as such. */
function inflated(data: Uint8Array, where: string): Uint8Array {
  try {
    return inflate(data);
  } catch (error) {
    throw corrupt(`an entry of ${where} does not inflate (${String(error).slice(0, 100)})`);
  }
}

function parseIndex(pack: string, idx: Uint8Array, packSize: number): PackIndex {
  const view = new DataView(idx.buffer, idx.byteOffset, idx.byteLength);
  if (idx.byteLength < 8 + 256 * 4 || view.getUint32(0) !== 0xff744f63 || view.getUint32(4) !== 2) throw corrupt(`${pack}'s index is not version 2`);
  const count = view.getUint32(8 + 255 * 4);
  if (idx.byteLength < 8 + 256 * 4 + count * 28) throw corrupt(`${pack}'s index is cut short`);
  const index: PackIndex = { pack, idx, view, count, sorted: new Float64Array(count), end: packSize - 20 };
  for (let i = 0; i < count; i++) index.sorted[i] = offsetOf(index, i);
  index.sorted.sort();
  return index;
}

/** The pack offset of the `i`th object (by id) of an index. */
function offsetOf(index: PackIndex, i: number): number {
  const offsets = 8 + 256 * 4 + index.count * 24;
  const offset = index.view.getUint32(offsets + i * 4);
  if (!(offset & 0x80000000)) return offset;
  return Number(index.view.getBigUint64(offsets + index.count * 4 + (offset & 0x7fffffff) * 8));
}

/** Binary search of the index's names, within the fanout's bucket for the id's first byte. */
function find(index: PackIndex, name: Uint8Array): number | undefined {
  const first = name[0] ?? 0;
  let low = first === 0 ? 0 : index.view.getUint32(8 + (first - 1) * 4);
  let high = index.view.getUint32(8 + first * 4);
  const names = 8 + 256 * 4;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const at = names + middle * 20;
    let order = 0;
    for (let i = 0; i < 20 && order === 0; i++) order = (index.idx[at + i] ?? 0) - (name[i] ?? 0);
    if (order === 0) return offsetOf(index, middle);
    if (order < 0) low = middle + 1;
    else high = middle;
  }
  return undefined;
}

function nextOffset(index: PackIndex, offset: number): number {
  let low = 0;
  let high = index.sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((index.sorted[middle] ?? 0) <= offset) low = middle + 1;
    else high = middle;
  }
  return index.sorted[low] ?? index.end;
}

/** Rebuilds an object from its base and a git delta (copy and insert instructions). */
export function applyDelta(base: Uint8Array, delta: Uint8Array): Uint8Array {
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let scale = 1; ; scale *= 128) {
      const byte = delta[at++] ?? 0;
      value += (byte & 0x7f) * scale;
      if (!(byte & 0x80) || at >= delta.byteLength) return value;
    }
  };
  if (varint() !== base.byteLength) throw corrupt("a delta's base has another size");
  const out = new Uint8Array(varint());
  let written = 0;
  while (at < delta.byteLength) {
    const op = delta[at++] ?? 0;
    if (op & 0x80) {
      let from = 0;
      let length = 0;
      for (let bit = 0; bit < 4; bit++) if (op & (1 << bit)) from += (delta[at++] ?? 0) * 2 ** (8 * bit);
      for (let bit = 0; bit < 3; bit++) if (op & (16 << bit)) length += (delta[at++] ?? 0) * 2 ** (8 * bit);
      if (length === 0) length = 0x10000;
      if (from + length > base.byteLength || written + length > out.byteLength) throw corrupt("a delta copies past its base or result");
      out.set(base.subarray(from, from + length), written);
      written += length;
    } else if (op > 0) {
      if (at + op > delta.byteLength || written + op > out.byteLength) throw corrupt("a delta inserts past its result");
      out.set(delta.subarray(at, at + op), written);
      at += op;
      written += op;
    } else {
      throw corrupt("a delta holds a reserved instruction");
    }
  }
  if (written !== out.byteLength) throw corrupt("a delta rebuilds fewer bytes than it declares");
  return out;
}

function oidBytes(oid: string): Uint8Array | undefined {
  if (!/^[0-9a-f]{40}$/.test(oid)) return undefined;
  const out = new Uint8Array(20);
  for (let i = 0; i < 20; i++) out[i] = Number.parseInt(oid.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function hex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}

/** Stored bytes that do not read as git wrote them: a bug or damage, never the caller's input. */
function corrupt(why: string): ItxError {
  return new ItxError("INTERNAL", `the repository's stored objects cannot be read: ${why}`);
}
