import { Inflate, deflate } from "pako";
import { ItxError } from "iterate/errors";
import { LIMITS } from "../limits.ts";
import type { PackedSource, SqliteFs } from "./sqlite-fs.ts";

/**
 * The objects of a repository's stored packs, read one at a time by range from SQLite: an object
 * costs its own entry (and its delta bases'), never its pack. Packs never change once stored (a
 * push adds a new one), so each index is parsed once and kept: about 40 bytes an object.
 *
 * A delta's base is looked for where it cannot lead back to the delta: an offset delta's earlier
 * in its own pack; an id delta's as a loose row (whole), then earlier in its own pack, then in a
 * pack stored before it. A push is read back by these same rules before it is kept
 * (`verifyPackObjects` in repo-pack.ts), so every stored object reads as the id it is indexed by.
 */

const PACK_DIR = "/git/objects/pack";
const NAMES: Record<number, ObjectType> = { 1: "commit", 2: "tree", 3: "blob", 4: "tag" };
const OFS_DELTA = 6;
const REF_DELTA = 7;
/** git's own ceiling on a delta chain (`pack.depth` stops at 4095); a longer one is corrupt. */
const DELTA_CHAIN_MAX = 4096;
/** Inflated objects kept (most recently used): delta bases are shared, most often the newest ones. */
const CACHE_BYTES = 8_388_608;

export type ObjectType = "commit" | "tree" | "blob" | "tag";

/** A whole object: its type and content. */
export interface GitObject {
  type: ObjectType;
  content: Uint8Array;
}

/** One pack's index (version 2), kept as the bytes it was read as. */
interface PackIndex {
  pack: string;
  /** Its place among the packs: a delta's base is looked for only in packs before it. */
  order: number;
  idx: Uint8Array;
  view: DataView;
  count: number;
  /** Entry offsets in pack order, to find where each entry ends, and each one's place in the index. */
  sorted: Float64Array;
  positions: Uint32Array;
  /** Where the entries stop: the pack's size less its 20-byte trailer. */
  end: number;
}

/** Where one object's entry lies. */
interface Located {
  index: PackIndex;
  offset: number;
}

export interface PackedObjectsOptions {
  /** The packs' index files, oldest first: by default every stored one, in the order they were stored. */
  indexes?: () => string[];
  /** Every entry must inflate to exactly its bytes, up to the next entry (reading a push back). */
  strict?: boolean;
}

export class PackedObjects implements PackedSource {
  readonly #fs: SqliteFs;
  readonly #list: () => string[];
  readonly #strict: boolean;
  readonly #indexes = new Map<string, PackIndex>();
  readonly #cache = new Map<string, GitObject>();
  #cacheBytes = 0;

  constructor(fs: SqliteFs, options: PackedObjectsOptions = {}) {
    this.#fs = fs;
    this.#list = options.indexes ?? (() => fs.storedFiles(`${PACK_DIR}/`).filter((path) => path.endsWith(".idx")));
    this.#strict = options.strict ?? false;
  }

  has(oid: string): boolean {
    return this.#locate(oid) !== undefined;
  }

  async looseFile(oid: string): Promise<Uint8Array | undefined> {
    const object = this.read(oid);
    // Stored, not compressed: isomorphic-git inflates it at once, and checks its id.
    return object ? deflate(framed(object), { level: 0 }) : undefined;
  }

  /** The object `oid` of a pack, rebuilt if it is stored as a delta; undefined when none holds it. */
  read(oid: string): GitObject | undefined {
    return this.resolve(oid)?.object;
  }

  /**
   * The object `oid` and whether its entry is thin: an id delta on an object outside its own
   * pack (git pushes an edited file so), which a push keeps whole beside the pack.
   */
  resolve(oid: string): { object: GitObject; thin: boolean } | undefined {
    const at = this.#locate(oid);
    if (!at) return undefined;
    const thin = { value: false };
    const object = this.#objectAt(at.index, at.offset, 0, thin);
    return { object, thin: thin.value };
  }

  /**
   * The raw entry of `oid` (header and deflated data, as a pack carries it) when a pack holds it
   * whole, not as a delta: a fetch's pack copies it as it is.
   */
  rawEntry(oid: string): Uint8Array | undefined {
    const at = this.#locate(oid);
    if (!at) return undefined;
    const entry = this.#entry(at.index, at.offset);
    const type = ((entry[0] ?? 0) >> 4) & 7;
    return type >= 1 && type <= 4 ? entry : undefined;
  }

  /** Objects the listed packs hold together (each index's count). */
  count(): number {
    this.#added();
    let total = 0;
    for (const index of this.#indexes.values()) total += index.count;
    return total;
  }

  #locate(oid: string, before?: number): Located | undefined {
    const name = oidBytes(oid);
    if (!name) return undefined;
    for (const index of this.#indexes.values()) {
      if (before !== undefined && index.order >= before) continue;
      const offset = find(index, name);
      if (offset !== undefined) return { index, offset };
    }
    // Not in a pack read so far: a pack stored since then may hold it.
    for (const index of this.#added()) {
      if (before !== undefined && index.order >= before) continue;
      const offset = find(index, name);
      if (offset !== undefined) return { index, offset };
    }
    return undefined;
  }

  /** The indexes of packs listed now and not read before, read now. */
  #added(): PackIndex[] {
    const added: PackIndex[] = [];
    const paths = this.#list();
    for (const [order, path] of paths.entries()) {
      const known = this.#indexes.get(path);
      if (known) {
        known.order = order;
        continue;
      }
      const pack = path.replace(/\.idx$/, ".pack");
      const idx = this.#fs.read(path);
      const size = this.#fs.fileSize(pack);
      if (!idx || size === undefined) continue;
      const index = parseIndex(pack, order, idx, size);
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

  #objectAt(index: PackIndex, offset: number, depth: number, thin?: { value: boolean }): GitObject {
    const key = `${index.pack}:${offset}`;
    const cached = this.#cache.get(key);
    if (cached && !thin) {
      // Most recently used last: the Map's order is the eviction order.
      this.#cache.delete(key);
      this.#cache.set(key, cached);
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
      if (back.value <= 0 || offset - back.value < 12) throw corrupt(`a delta in ${index.pack} points outside it`);
      base = this.#objectAt(index, offset - back.value, depth + 1);
    } else if (type === REF_DELTA) {
      // A thin entry kept whole beside its pack (a push does that) is read whole.
      if (!thin) {
        const whole = this.#loose(oidAt(index, offset));
        if (whole) return this.#keep(key, whole);
      }
      const baseId = hex(entry.subarray(at, at + 20));
      at += 20;
      base = this.#loose(baseId);
      if (base) {
        if (thin) thin.value = true;
      } else {
        const inPack = find(index, oidBytes(baseId) as Uint8Array);
        if (inPack !== undefined && inPack < offset) {
          base = this.#objectAt(index, inPack, depth + 1);
        } else {
          const earlier = this.#locate(baseId, index.order);
          if (!earlier) throw corrupt(`a delta in ${index.pack} is based on ${baseId}, which nothing before it holds`);
          if (thin) thin.value = true;
          base = this.#objectAt(earlier.index, earlier.offset, depth + 1);
        }
      }
    } else if (!NAMES[type]) {
      throw corrupt(`an entry of ${index.pack} has type ${type}`);
    }
    // Stored objects were held to REPO_FILE_MAX_BYTES when pushed (deltas by what they rebuild).
    if (size > objectMax()) throw corrupt(`an entry of ${index.pack} declares ${size} bytes`);
    const data = inflated(entry.subarray(at), `${index.pack} at ${offset}`, this.#strict);
    if (data.byteLength !== size) throw corrupt(`an entry of ${index.pack} inflates to ${data.byteLength} bytes, not ${size}`);
    const object = base ? { type: base.type, content: applyDelta(base.content, data) } : { type: NAMES[type] as ObjectType, content: data };
    return this.#keep(key, object);
  }

  /** A loose object stored as a row (a commit made through the API, or a push's thin object kept whole). */
  #loose(oid: string): GitObject | undefined {
    const file = this.#fs.read(`/git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`);
    if (!file) return undefined;
    const wrapped = inflated(file, oid, false);
    const space = wrapped.indexOf(0x20);
    const nul = wrapped.indexOf(0);
    const type = new TextDecoder().decode(wrapped.subarray(0, space));
    if (space < 0 || nul < space || !Object.values(NAMES).includes(type as ObjectType)) throw corrupt(`the loose object ${oid} has no header`);
    return { type: type as ObjectType, content: wrapped.subarray(nul + 1) };
  }

  #keep(key: string, object: GitObject): GitObject {
    if (object.content.byteLength > CACHE_BYTES / 4) return object;
    const held = this.#cache.get(key);
    if (held) this.#cacheBytes -= held.content.byteLength;
    this.#cache.set(key, object);
    this.#cacheBytes += object.content.byteLength;
    for (const [oldest, value] of this.#cache) {
      if (this.#cacheBytes <= CACHE_BYTES) break;
      this.#cache.delete(oldest);
      this.#cacheBytes -= value.content.byteLength;
    }
    return object;
  }
}

/** An object as git frames it before hashing and compressing: `<type> <size>\0<content>`. */
export function framed(object: GitObject): Uint8Array {
  const head = new TextEncoder().encode(`${object.type} ${object.content.byteLength}\0`);
  const out = new Uint8Array(head.byteLength + object.content.byteLength);
  out.set(head);
  out.set(object.content, head.byteLength);
  return out;
}

/** The largest object a repository holds: a file at REPO_FILE_MAX_BYTES, with room for a tree or commit. */
function objectMax(): number {
  return LIMITS.REPO_FILE_MAX_BYTES + 65_536;
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

/**
 * Inflates a zlib stream; damage is named as such. `exact`: the stream must use every byte it was
 * given (an entry that leaves bytes before the next one would carry them into a fetch's pack).
 */
function inflated(data: Uint8Array, where: string, exact: boolean): Uint8Array {
  const inflator = new Inflate();
  inflator.push(data, true);
  if (inflator.err || !inflator.ended || !inflator.result) throw corrupt(`${where} does not inflate (${inflator.msg || "cut short"})`);
  if (exact && inflator.strm.avail_in !== 0) throw corrupt(`${where} leaves ${inflator.strm.avail_in} bytes before the next entry`);
  return inflator.result;
}

function parseIndex(pack: string, order: number, idx: Uint8Array, packSize: number): PackIndex {
  const view = new DataView(idx.buffer, idx.byteOffset, idx.byteLength);
  if (idx.byteLength < 8 + 256 * 4 || view.getUint32(0) !== 0xff744f63 || view.getUint32(4) !== 2) throw corrupt(`${pack}'s index is not version 2`);
  const count = view.getUint32(8 + 255 * 4);
  if (idx.byteLength < 8 + 256 * 4 + count * 28) throw corrupt(`${pack}'s index is cut short`);
  const index: PackIndex = { pack, order, idx, view, count, sorted: new Float64Array(count), positions: new Uint32Array(count), end: packSize - 20 };
  const offsets = Array.from({ length: count }, (_, i) => offsetOf(index, i));
  const byOffset = Array.from({ length: count }, (_, i) => i).toSorted((a, b) => (offsets[a] ?? 0) - (offsets[b] ?? 0));
  for (const [rank, position] of byOffset.entries()) {
    index.sorted[rank] = offsets[position] ?? 0;
    index.positions[rank] = position;
  }
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

/** The rank of `offset` among the entries (the first entry past it when none starts there). */
function rankOf(index: PackIndex, offset: number): number {
  let low = 0;
  let high = index.sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((index.sorted[middle] ?? 0) < offset) low = middle + 1;
    else high = middle;
  }
  return low;
}

function nextOffset(index: PackIndex, offset: number): number {
  const rank = rankOf(index, offset);
  const next = index.sorted[index.sorted[rank] === offset ? rank + 1 : rank];
  return next ?? index.end;
}

/** The id of the object whose entry starts at `offset`. */
function oidAt(index: PackIndex, offset: number): string {
  const position = index.positions[rankOf(index, offset)] ?? 0;
  const at = 8 + 256 * 4 + position * 20;
  return hex(index.idx.subarray(at, at + 20));
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
  const size = varint();
  // Declared before anything is built: never allocated past what a stored object may be.
  if (size > objectMax()) throw corrupt(`a delta rebuilds ${size} bytes`);
  const out = new Uint8Array(size);
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

/** Stored bytes that do not read as git wrote them: damage or a bug, never the caller's input. */
function corrupt(why: string): ItxError {
  return new ItxError("INTERNAL", `the repository's stored objects cannot be read: ${why}`);
}
