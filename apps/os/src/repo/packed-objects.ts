import { Inflate, deflate } from "pako";
import { ItxError } from "iterate/errors";
import { LIMITS } from "../limits.ts";
import type { PackedSource, SqliteFs } from "./sqlite-fs.ts";

/**
 * The objects of a repository's stored packs, read one at a time by range from SQLite: an object
 * costs its own entry (and its delta bases'), never its pack. Packs never change once stored (a
 * push adds a new one), so each index is parsed once and kept: about 40 bytes an object.
 *
 * A delta's base is looked for where it cannot lead back to the delta: an offset delta's at an
 * earlier entry of its own pack; an id delta's as a loose row (whole), then earlier in its own
 * pack, then in a pack stored before it. A delta entry whose object is also a loose row is read
 * from that row (a push keeps an object whole so when its chain grows long). A push is read back
 * entry by entry by these same rules before it is kept (`readBack`), so every entry of a pack
 * stored since reads as the id its index gives it, through a chain of at most DEPTH_KEPT deltas.
 */

const PACK_DIR = "/git/objects/pack";
const NAMES: Record<number, ObjectType> = { 1: "commit", 2: "tree", 3: "blob", 4: "tag" };
const OFS_DELTA = 6;
const REF_DELTA = 7;
/** A chain longer than this is not read (deeper recursion would overflow the stack); git's default depth is 50. */
const DELTA_CHAIN_MAX = 1000;
/**
 * The longest chain a push leaves: an entry deeper than this (counting deltas in earlier pushes)
 * is kept whole beside its pack, as git's own default `pack.depth` bounds its chains.
 */
export const DEPTH_KEPT = 50;
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
  /** Bytes of inflated objects kept to rebuild deltas from (8 MiB), an object at most a quarter of it. */
  cacheBytes?: number;
}

/** One entry as a push is read back: its id (by the index), its object, and the deltas a read of it walks. */
export interface ReadBackEntry {
  oid: string;
  object: GitObject;
  depth: number;
}

export class PackedObjects implements PackedSource {
  readonly #fs: SqliteFs;
  readonly #list: () => string[];
  readonly #strict: boolean;
  readonly #indexes = new Map<string, PackIndex>();
  readonly #cache = new Map<string, GitObject>();
  readonly #cacheMax: number;
  #cacheBytes = 0;
  /** Bytes inflated and rebuilt so far: the work reads cost, for a caller to bound. */
  built = 0;

  constructor(fs: SqliteFs, options: PackedObjectsOptions = {}) {
    this.#fs = fs;
    this.#list = options.indexes ?? (() => fs.storedFiles(`${PACK_DIR}/`).filter((path) => path.endsWith(".idx")));
    this.#strict = options.strict ?? false;
    this.#cacheMax = options.cacheBytes ?? CACHE_BYTES;
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
    const at = this.#locate(oid);
    return at ? this.#objectAt(at.index, at.offset, 0) : undefined;
  }

  /**
   * Reads every entry of the pack whose index is `path`, in pack order, as it will be read once
   * stored, and hands each to `visit` with its chain's depth; `visit` answers true when it kept
   * the object whole as a loose row (its chain then ends there). Refuses (INTERNAL, which a push
   * reports as its own fault) a pack whose entries do not fill it exactly, list one offset twice,
   * or point a delta anywhere but an earlier entry.
   */
  async readBack(path: string, visit: (entry: ReadBackEntry) => Promise<boolean>): Promise<void> {
    this.#added();
    const index = this.#indexes.get(path);
    if (!index) throw corrupt(`no pack index ${path}`);
    if (index.count > 0 && index.sorted[0] !== 12) throw corrupt(`${index.pack} holds bytes before its first entry`);
    const depths = new Uint16Array(index.count);
    for (let rank = 0; rank < index.count; rank++) {
      const offset = index.sorted[rank] as number;
      if (rank > 0 && offset === index.sorted[rank - 1]) throw corrupt(`${index.pack}'s index lists one entry twice`);
      const head = this.#header(index, offset);
      // The depth a read will walk, by the rules #objectAt reads by.
      let depth = 0;
      if (head.type === OFS_DELTA || head.type === REF_DELTA) {
        if (this.#looseExists(oidAt(index, offset))) depth = 0;
        else if (head.type === OFS_DELTA) depth = (depths[rankOf(index, head.base as number)] ?? 0) + 1;
        else {
          const base = head.baseId as string;
          const inPack = this.#looseExists(base) ? undefined : this.#inPackBefore(index, base, offset);
          const earlier = inPack === undefined && !this.#looseExists(base) ? this.#locate(base, index.order) : undefined;
          if (inPack !== undefined) depth = (depths[rankOf(index, inPack)] ?? 0) + 1;
          else depth = earlier ? this.#depthAt(earlier.index, earlier.offset, 1) + 1 : 1;
        }
      }
      const object = this.#objectAt(index, offset, 0);
      const kept = await visit({ oid: oidAt(index, offset), object, depth });
      depths[rank] = kept ? 0 : Math.min(depth, DELTA_CHAIN_MAX);
    }
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

  #objectAt(index: PackIndex, offset: number, depth: number): GitObject {
    const key = `${index.pack}:${offset}`;
    const cached = this.#cache.get(key);
    if (cached) {
      // Most recently used last: the Map's order is the eviction order.
      this.#cache.delete(key);
      this.#cache.set(key, cached);
      return cached;
    }
    if (depth > DELTA_CHAIN_MAX) throw corrupt(`a delta chain in ${index.pack} is longer than ${DELTA_CHAIN_MAX}`);
    const head = this.#header(index, offset);
    let base: GitObject | undefined;
    if (head.type === OFS_DELTA || head.type === REF_DELTA) {
      // An object kept whole as a loose row (a push does that for a long chain) is read whole.
      const whole = this.#loose(oidAt(index, offset));
      if (whole) return this.#keep(key, whole);
    }
    if (head.type === OFS_DELTA) {
      base = this.#objectAt(index, head.base as number, depth + 1);
    } else if (head.type === REF_DELTA) {
      const baseId = head.baseId as string;
      base = this.#loose(baseId);
      if (!base) {
        const inPack = this.#inPackBefore(index, baseId, offset);
        const earlier = inPack === undefined ? this.#locate(baseId, index.order) : { index, offset: inPack };
        if (!earlier) throw corrupt(`a delta in ${index.pack} is based on ${baseId}, which nothing before it holds`);
        base = this.#objectAt(earlier.index, earlier.offset, depth + 1);
      }
    }
    const data = inflated(head.entry.subarray(head.dataStart), `${index.pack} at ${offset}`, this.#strict);
    if (data.byteLength !== head.size) throw corrupt(`an entry of ${index.pack} inflates to ${data.byteLength} bytes, not ${head.size}`);
    this.built += data.byteLength;
    const object = base ? { type: base.type, content: applyDelta(base.content, data) } : { type: NAMES[head.type] as ObjectType, content: data };
    if (base) this.built += object.content.byteLength;
    return this.#keep(key, object);
  }

  /** The entry at `offset` and its header: type, declared size, where its data starts, its base. */
  #header(index: PackIndex, offset: number): { entry: Uint8Array; type: number; size: number; dataStart: number; base?: number; baseId?: string } {
    const entry = this.#entry(index, offset);
    let at = 0;
    let byte = entry[at++] ?? 0;
    const type = (byte >> 4) & 7;
    let size = byte & 15;
    for (let scale = 16; byte & 0x80; scale *= 128) {
      byte = entry[at++] ?? 0;
      size += (byte & 0x7f) * scale;
    }
    // Stored objects were held to REPO_FILE_MAX_BYTES when pushed (deltas by what they rebuild).
    if (size > objectMax()) throw corrupt(`an entry of ${index.pack} declares ${size} bytes`);
    if (type === OFS_DELTA) {
      const back = ofsBack(entry, at);
      const base = offset - back.value;
      // Only an earlier entry's start: any other offset would read bytes no index names.
      if (back.value <= 0 || base < 12 || index.sorted[rankOf(index, base)] !== base) throw corrupt(`a delta in ${index.pack} points at no earlier entry`);
      return { entry, type, size, dataStart: back.next, base };
    }
    if (type === REF_DELTA) return { entry, type, size, dataStart: at + 20, baseId: hex(entry.subarray(at, at + 20)) };
    if (!NAMES[type]) throw corrupt(`an entry of ${index.pack} has type ${type}`);
    return { entry, type, size, dataStart: at };
  }

  /** Where `oid`'s entry starts in `index` when it comes before `offset`. */
  #inPackBefore(index: PackIndex, oid: string, offset: number): number | undefined {
    const name = oidBytes(oid);
    const found = name ? find(index, name) : undefined;
    return found !== undefined && found < offset ? found : undefined;
  }

  /** The depth of the chain at an entry of a stored pack, from headers alone (past DEPTH_KEPT it stops counting). */
  #depthAt(index: PackIndex, offset: number, counted: number): number {
    if (counted > DEPTH_KEPT) return 0;
    const head = this.#header(index, offset);
    if (head.type !== OFS_DELTA && head.type !== REF_DELTA) return 0;
    if (this.#looseExists(oidAt(index, offset))) return 0;
    if (head.type === OFS_DELTA) return 1 + this.#depthAt(index, head.base as number, counted + 1);
    const baseId = head.baseId as string;
    if (this.#looseExists(baseId)) return 1;
    const inPack = this.#inPackBefore(index, baseId, offset);
    const earlier = inPack === undefined ? this.#locate(baseId, index.order) : { index, offset: inPack };
    return earlier ? 1 + this.#depthAt(earlier.index, earlier.offset, counted + 1) : 1;
  }

  #looseExists(oid: string): boolean {
    return this.#fs.fileSize(`/git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`) !== undefined;
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
    if (object.content.byteLength > this.#cacheMax / 4) return object;
    const held = this.#cache.get(key);
    if (held) this.#cacheBytes -= held.content.byteLength;
    this.#cache.set(key, object);
    this.#cacheBytes += object.content.byteLength;
    for (const [oldest, value] of this.#cache) {
      if (this.#cacheBytes <= this.#cacheMax) break;
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

/** Where the entry at `offset` ends: the first entry starting past it (an offset listed twice is one entry). */
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
