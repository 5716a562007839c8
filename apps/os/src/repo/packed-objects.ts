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

/** One pack's index: where its entries start, and which object each is. */
interface PackIndex {
  readonly pack: string;
  /** Its place among the packs: a delta's base is looked for only in packs before it. */
  order: number;
  readonly count: number;
  /** Entry offsets in pack order, to find where each entry ends. */
  readonly sorted: Float64Array;
  /** Where the entries stop: the pack's size less its 20-byte trailer. */
  readonly end: number;
  /** Where the entry of the object these 20 bytes name starts, if this pack holds it. */
  find(name: Uint8Array): number | undefined;
  /** The id of the object whose entry starts at `offset` (undefined while a push is being indexed and it is not read yet). */
  oidAt(offset: number): string | undefined;
}

/** A stored pack's version 2 index, kept as the bytes it was read as (about 40 bytes an object). */
class StoredIndex implements PackIndex {
  readonly pack: string;
  order: number;
  readonly count: number;
  readonly sorted: Float64Array;
  readonly end: number;
  readonly #idx: Uint8Array;
  readonly #view: DataView;
  /** Each entry's place in the index, in pack order (beside `sorted`). */
  readonly #positions: Uint32Array;

  constructor(pack: string, order: number, idx: Uint8Array, packSize: number) {
    const view = new DataView(idx.buffer, idx.byteOffset, idx.byteLength);
    if (idx.byteLength < 8 + 256 * 4 || view.getUint32(0) !== 0xff744f63 || view.getUint32(4) !== 2) throw corrupt(`${pack}'s index is not version 2`);
    const count = view.getUint32(8 + 255 * 4);
    if (idx.byteLength < 8 + 256 * 4 + count * 28) throw corrupt(`${pack}'s index is cut short`);
    this.pack = pack;
    this.order = order;
    this.#idx = idx;
    this.#view = view;
    this.count = count;
    this.end = packSize - 20;
    this.sorted = new Float64Array(count);
    this.#positions = new Uint32Array(count);
    const offsets = Array.from({ length: count }, (_, i) => this.#offsetOf(i));
    const byOffset = Array.from({ length: count }, (_, i) => i).toSorted((a, b) => (offsets[a] ?? 0) - (offsets[b] ?? 0));
    for (const [rank, position] of byOffset.entries()) {
      this.sorted[rank] = offsets[position] ?? 0;
      this.#positions[rank] = position;
    }
  }

  /** Binary search of the names, within the fanout's bucket for the id's first byte. */
  find(name: Uint8Array): number | undefined {
    const first = name[0] ?? 0;
    let low = first === 0 ? 0 : this.#view.getUint32(8 + (first - 1) * 4);
    let high = this.#view.getUint32(8 + first * 4);
    const names = 8 + 256 * 4;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const at = names + middle * 20;
      let order = 0;
      for (let i = 0; i < 20 && order === 0; i++) order = (this.#idx[at + i] ?? 0) - (name[i] ?? 0);
      if (order === 0) return this.#offsetOf(middle);
      if (order < 0) low = middle + 1;
      else high = middle;
    }
    return undefined;
  }

  oidAt(offset: number): string | undefined {
    const rank = rankOf(this, offset);
    if (this.sorted[rank] !== offset) return undefined;
    const at = 8 + 256 * 4 + (this.#positions[rank] ?? 0) * 20;
    return hex(this.#idx.subarray(at, at + 20));
  }

  /** The pack offset of the `i`th object (by id). */
  #offsetOf(i: number): number {
    const offsets = 8 + 256 * 4 + this.count * 24;
    const offset = this.#view.getUint32(offsets + i * 4);
    if (!(offset & 0x80000000)) return offset;
    return Number(this.#view.getBigUint64(offsets + this.count * 4 + (offset & 0x7fffffff) * 8));
  }
}

/** A pushed pack while it is indexed: entries known from the walk, ids learned in pack order. */
class BuildingIndex implements PackIndex {
  readonly pack: string;
  order: number;
  readonly count: number;
  readonly sorted: Float64Array;
  readonly end: number;
  readonly #names = new Map<string, number>();
  readonly #ids = new Map<number, string>();

  constructor(pack: string, order: number, entries: number[], end: number) {
    this.pack = pack;
    this.order = order;
    this.sorted = Float64Array.from(entries);
    this.count = entries.length;
    this.end = end;
  }

  find(name: Uint8Array): number | undefined {
    return this.#names.get(hex(name));
  }

  oidAt(offset: number): string | undefined {
    return this.#ids.get(offset);
  }

  /** Learns the id of the entry at `offset`; false when the pack already holds that object. */
  learn(offset: number, oid: string): boolean {
    if (this.#names.has(oid)) return false;
    this.#names.set(oid, offset);
    this.#ids.set(offset, oid);
    return true;
  }

  /** The ids in index order, each with its entry's offset. */
  named(): Array<[string, number]> {
    return [...this.#names].toSorted(([a], [b]) => (a < b ? -1 : 1));
  }
}

/** Where one object's entry lies. */
interface Located {
  index: PackIndex;
  offset: number;
}

/** What an entry's first bytes say: its type, declared size, where its data starts, and its base. */
interface EntryHeader {
  type: number;
  size: number;
  dataStart: number;
  /** An offset delta's base: the start of an earlier entry of the same pack. */
  base?: number;
  /** An id delta's base. */
  baseId?: string;
}

const keyOf = (at: Located) => `${at.index.pack}:${at.offset}`;

/** One entry as a push is indexed: its id, its object, the deltas a read of it walks, and the bytes reading it inflated and rebuilt. */
export interface ReadBackEntry {
  oid: string;
  object: GitObject;
  depth: number;
  built: number;
}

export class PackedObjects implements PackedSource {
  readonly #fs: SqliteFs;
  readonly #indexes = new Map<string, PackIndex>();
  readonly #cache = new Map<string, GitObject>();
  readonly #depths = new Map<string, number>();
  #cacheBytes = 0;
  /** Pushes being indexed now (their cache is larger). */
  #indexing = 0;
  #listed: { version: number; paths: string[] } | undefined;
  /** Bytes inflated and rebuilt so far: the work reads cost, for a caller to bound. */
  built = 0;

  constructor(fs: SqliteFs) {
    this.#fs = fs;
  }

  /**
   * The packs' index files: the stored ones in the order they were stored, then a push's staged
   * one; listed again only when the files under objects/pack changed.
   */
  #list(): string[] {
    const fs = this.#fs;
    if (this.#listed?.version !== fs.packsVersion) {
      const paths = [...fs.storedFiles(`${PACK_DIR}/`), ...fs.stagedPaths().filter((path) => path.startsWith(`${PACK_DIR}/`))].filter((path) => path.endsWith(".idx"));
      this.#listed = { version: fs.packsVersion, paths };
    }
    return this.#listed.paths;
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
    return at ? this.#objectAt(at.index, at.offset) : undefined;
  }

  /**
   * Indexes a staged pack whose entries start at `entries` (the inflation walk found them, and
   * that they fill it): reads every entry in pack order, strictly (the stored packs its deltas
   * rest on are read as they are), by the rules any later read follows,
   * hashes it to learn its id, and hands each to `visit` with the depth of its chain; `visit`
   * answers true when it kept the object whole as a loose row (a chain then ends there). Answers
   * the index file (git's version 2). Refuses (INTERNAL, which a push reports as its own fault)
   * an entry that does not inflate to exactly its bytes, a padded header, a delta on anything
   * but an earlier entry or an older object, and a pack that holds one object twice.
   */
  async indexPack(pack: string, entries: number[], visit: (entry: ReadBackEntry) => Promise<boolean>): Promise<Uint8Array> {
    const size = this.#fs.fileSize(pack);
    if (size === undefined) throw corrupt(`no pack ${pack}`);
    this.#added();
    const index = new BuildingIndex(pack, this.#list().length, entries, size - 20);
    const key = `${pack}#indexing`;
    this.#indexes.set(key, index);
    this.#indexing += 1;
    try {
      const depths = new Uint16Array(index.count);
      const crcs = new Uint32Array(index.count);
      for (let rank = 0; rank < index.count; rank++) {
        const offset = index.sorted[rank] as number;
        const head = this.#header(index, offset);
        // Synchronous: no other read of this reader (a fetch beside the push) is counted here.
        const builtBefore = this.built;
        const object = this.#objectAt(index, offset);
        const built = this.built - builtBefore;
        const oid = hex(new Uint8Array(await crypto.subtle.digest("SHA-1", framed(object))));
        if (!index.learn(offset, oid)) throw corrupt(`${pack} holds ${oid} twice`);
        crcs[rank] = crc32(this.#entry(index, offset));
        // The depth a read will walk, by the rules #objectAt reads by.
        let depth = 0;
        if ((head.type === OFS_DELTA || head.type === REF_DELTA) && !this.#looseExists(oid)) {
          if (head.type === OFS_DELTA) depth = (depths[rankOf(index, head.base as number)] ?? 0) + 1;
          else {
            const base = head.baseId as string;
            const inPack = this.#looseExists(base) ? undefined : this.#inPackBefore(index, base, offset);
            const earlier = inPack === undefined && !this.#looseExists(base) ? this.#locate(base, index.order) : undefined;
            if (inPack !== undefined) depth = (depths[rankOf(index, inPack)] ?? 0) + 1;
            else depth = earlier ? this.#depthAt(earlier.index, earlier.offset) + 1 : 1;
          }
        }
        const kept = await visit({ oid, object, depth, built });
        depths[rank] = kept ? 0 : Math.min(depth, DELTA_CHAIN_MAX);
      }
      const trailer = this.#fs.readRange(pack, size - 20, size) ?? new Uint8Array(20);
      return await writeIndex(index.named(), index.sorted, crcs, trailer);
    } finally {
      this.#indexes.delete(key);
      this.#indexing -= 1;
      if (this.#indexing === 0) this.#trim(CACHE_BYTES);
      // Depths are remembered for one push: a later one may keep an object of a chain whole.
      this.#depths.clear();
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
      const offset = index.find(name);
      if (offset !== undefined) return { index, offset };
    }
    // Not in a pack read so far: a pack stored since then may hold it.
    for (const index of this.#added()) {
      if (before !== undefined && index.order >= before) continue;
      const offset = index.find(name);
      if (offset !== undefined) return { index, offset };
    }
    return undefined;
  }

  /** Reads the packs listed now again: those no longer listed (a refused push's) are forgotten. */
  refresh(): void {
    this.#added();
  }

  /** The indexes of packs listed now and not read before, read now; those no longer listed are dropped. */
  #added(): PackIndex[] {
    const added: PackIndex[] = [];
    const paths = this.#list();
    const listed = new Set(paths);
    for (const path of this.#indexes.keys()) if (!listed.has(path) && !path.endsWith("#indexing")) this.#indexes.delete(path);
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
      const index = new StoredIndex(pack, order, idx, size);
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

  /**
   * The object at an entry. The chain is walked down by headers alone (each a few bytes), then
   * built up from its base one delta at a time: memory holds two objects and one delta, however
   * long the chain.
   */
  #objectAt(index: PackIndex, offset: number): GitObject {
    const chain: Array<{ index: PackIndex; offset: number; head: EntryHeader }> = [];
    let at: Located = { index, offset };
    let base: GitObject | undefined;
    for (;;) {
      const cached = this.#cache.get(keyOf(at));
      if (cached) {
        // Most recently used last: the Map's order is the eviction order.
        this.#cache.delete(keyOf(at));
        this.#cache.set(keyOf(at), cached);
        base = cached;
        break;
      }
      if (chain.length > DELTA_CHAIN_MAX) throw corrupt(`a delta chain in ${index.pack} is longer than ${DELTA_CHAIN_MAX}`);
      const head = this.#header(at.index, at.offset);
      if (head.type !== OFS_DELTA && head.type !== REF_DELTA) {
        base = this.#keep(keyOf(at), { type: NAMES[head.type] as ObjectType, content: this.#inflate(at, head) });
        break;
      }
      // An object kept whole as a loose row (a push does that for a long chain) is read whole.
      const own = at.index.oidAt(at.offset);
      const whole = own === undefined ? undefined : this.#loose(own);
      if (whole) {
        base = this.#keep(keyOf(at), whole);
        break;
      }
      chain.push({ ...at, head });
      if (head.type === OFS_DELTA) {
        at = { index: at.index, offset: head.base as number };
        continue;
      }
      const baseId = head.baseId as string;
      const loose = this.#loose(baseId);
      if (loose) {
        base = loose;
        break;
      }
      const inPack = this.#inPackBefore(at.index, baseId, at.offset);
      const earlier = inPack === undefined ? this.#locate(baseId, at.index.order) : { index: at.index, offset: inPack };
      if (!earlier) throw corrupt(`a delta in ${at.index.pack} is based on ${baseId}, which nothing before it holds`);
      at = earlier;
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      const link = chain[i] as { index: PackIndex; offset: number; head: EntryHeader };
      const content = applyDelta(base.content, this.#inflate(link, link.head));
      this.built += content.byteLength;
      base = this.#keep(keyOf(link), { type: base.type, content }, i === 0);
    }
    return base;
  }

  /** Whether entries of `index` are read strictly: those of a pack being indexed (stored ones are read as they are). */
  #strictFor(index: PackIndex): boolean {
    return index instanceof BuildingIndex;
  }

  /** An entry's data, inflated (strictly when reading a push back) to exactly the size its header declares. */
  #inflate(at: Located, head: EntryHeader): Uint8Array {
    const data = inflated(this.#entry(at.index, at.offset).subarray(head.dataStart), `${at.index.pack} at ${at.offset}`, this.#strictFor(at.index));
    if (data.byteLength !== head.size) throw corrupt(`an entry of ${at.index.pack} inflates to ${data.byteLength} bytes, not ${head.size}`);
    this.built += data.byteLength;
    return data;
  }

  /** An entry's header: type, declared size, where its data starts, its base. Read from its first bytes. */
  #header(index: PackIndex, offset: number): EntryHeader {
    // A header is at most 5 bytes of type and size here, then 10 of distance or 20 of base id.
    const entry = this.#fs.readRange(index.pack, offset, Math.min(offset + 32, nextOffset(index, offset))) ?? new Uint8Array(0);
    let at = 0;
    let byte = entry[at++] ?? 0;
    const type = (byte >> 4) & 7;
    let size = byte & 15;
    for (let scale = 16; byte & 0x80; scale *= 128) {
      // git refuses a header longer than a size_t; stored objects need at most 4 bytes of it.
      if (at >= 5) throw corrupt(`an entry of ${index.pack} has a header longer than 5 bytes`);
      byte = entry[at++] ?? 0;
      size += (byte & 0x7f) * scale;
    }
    // A copied entry keeps its header: one git would not write (a padded size) is not kept.
    if (this.#strictFor(index) && at > 1 && byte === 0) throw corrupt(`an entry of ${index.pack} pads its header`);
    // Stored objects were held to REPO_FILE_MAX_BYTES when pushed (deltas by what they rebuild).
    if (size > objectMax()) throw corrupt(`an entry of ${index.pack} declares ${size} bytes`);
    if (type === OFS_DELTA) {
      const back = ofsBack(entry, at);
      const base = offset - back.value;
      // Only an earlier entry's start: any other offset would read bytes no index names.
      if (back.value <= 0 || base < 12 || index.sorted[rankOf(index, base)] !== base) throw corrupt(`a delta in ${index.pack} points at no earlier entry`);
      return { type, size, dataStart: back.next, base };
    }
    if (type === REF_DELTA) return { type, size, dataStart: at + 20, baseId: hex(entry.subarray(at, at + 20)) };
    if (!NAMES[type]) throw corrupt(`an entry of ${index.pack} has type ${type}`);
    return { type, size, dataStart: at };
  }

  /** Where `oid`'s entry starts in `index` when it comes before `offset`. */
  #inPackBefore(index: PackIndex, oid: string, offset: number): number | undefined {
    const name = oidBytes(oid);
    const found = name ? index.find(name) : undefined;
    return found !== undefined && found < offset ? found : undefined;
  }

  /**
   * The depth of the chain at an entry of an earlier pack, from headers alone, remembered for the
   * life of this reader (a push's read-back asks for the same bases again and again). Past
   * DEPTH_KEPT it stops counting: only whether the chain is longer matters.
   */
  #depthAt(index: PackIndex, offset: number): number {
    const key = keyOf({ index, offset });
    const known = this.#depths.get(key);
    if (known !== undefined) return known;
    const walked: string[] = [];
    let depth = 0;
    let exact = false;
    let at: Located | undefined = { index, offset };
    while (at && depth <= DEPTH_KEPT) {
      const remembered = this.#depths.get(keyOf(at));
      if (remembered !== undefined) {
        depth += remembered;
        exact = true;
        break;
      }
      const head = this.#header(at.index, at.offset);
      const own = at.index.oidAt(at.offset);
      if ((head.type !== OFS_DELTA && head.type !== REF_DELTA) || (own !== undefined && this.#looseExists(own))) {
        exact = true;
        break;
      }
      walked.push(keyOf(at));
      depth += 1;
      if (head.type === OFS_DELTA) {
        at = { index: at.index, offset: head.base as number };
        continue;
      }
      const baseId = head.baseId as string;
      if (this.#looseExists(baseId)) {
        exact = true;
        break;
      }
      const inPack = this.#inPackBefore(at.index, baseId, at.offset);
      at = inPack === undefined ? this.#locate(baseId, at.index.order) : { index: at.index, offset: inPack };
      if (!at) exact = true;
    }
    // Each entry walked is as deep as what was left below it; a walk stopped at the cap knows only
    // that its first entry is deeper than DEPTH_KEPT.
    if (exact) for (const [i, walkedKey] of walked.entries()) this.#depths.set(walkedKey, Math.min(DEPTH_KEPT + 1, depth - i));
    else this.#depths.set(key, DEPTH_KEPT + 1);
    return Math.min(DEPTH_KEPT + 1, depth);
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

  /** Caches an object read; `always` keeps even a large one (the last object built: the next version's likely base). */
  #keep(key: string, object: GitObject, always = false): GitObject {
    // While a push is indexed the cache is twice as large, so a chain of 4 MiB files reads in one pass.
    const limit = this.#indexing > 0 ? 2 * CACHE_BYTES : CACHE_BYTES;
    if (object.content.byteLength > limit / 4 && !always) return object;
    const held = this.#cache.get(key);
    if (held) this.#cacheBytes -= held.content.byteLength;
    this.#cache.set(key, object);
    this.#cacheBytes += object.content.byteLength;
    this.#trim(limit);
    return object;
  }

  /** Drops the least recently used objects until the cache holds at most `limit` bytes. */
  #trim(limit: number): void {
    for (const [oldest, value] of this.#cache) {
      if (this.#cacheBytes <= limit) break;
      this.#cache.delete(oldest);
      this.#cacheBytes -= value.content.byteLength;
    }
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
  // zlib only (windowBits 15): pako would also take gzip, which git cannot read in a clone.
  const inflator = new Inflate({ windowBits: 15 });
  inflator.push(data, true);
  if (inflator.err || !inflator.ended || !inflator.result) throw corrupt(`${where} does not inflate (${inflator.msg || "cut short"})`);
  if (exact && inflator.strm.avail_in !== 0) throw corrupt(`${where} leaves ${inflator.strm.avail_in} bytes before the next entry`);
  return inflator.result;
}

/** The rank of `offset` among the entries (the first entry past it when none starts there). */
function rankOf(index: { sorted: Float64Array }, offset: number): number {
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

/** git's version 2 pack index: fanout, names, CRC-32s, offsets, the pack's checksum, then its own. */
async function writeIndex(named: Array<[string, number]>, sorted: Float64Array, crcs: Uint32Array, packChecksum: Uint8Array): Promise<Uint8Array> {
  const count = named.length;
  const body = new Uint8Array(8 + 256 * 4 + count * 28 + 20);
  const view = new DataView(body.buffer);
  view.setUint32(0, 0xff744f63);
  view.setUint32(4, 2);
  const names = 8 + 256 * 4;
  const crcTable = names + count * 20;
  const offsets = crcTable + count * 4;
  const fanout = new Uint32Array(256);
  for (const [i, [oid, offset]] of named.entries()) {
    const name = oidBytes(oid) as Uint8Array;
    const first = name[0] ?? 0;
    fanout[first] = (fanout[first] ?? 0) + 1;
    body.set(name, names + i * 20);
    view.setUint32(crcTable + i * 4, crcs[rankOf({ sorted }, offset)] ?? 0);
    // Pushed packs are far below 2 GiB: every offset fits the small table's 31 bits.
    view.setUint32(offsets + i * 4, offset);
  }
  let running = 0;
  for (let byte = 0; byte < 256; byte++) {
    running += fanout[byte] ?? 0;
    view.setUint32(8 + byte * 4, running);
  }
  body.set(packChecksum, offsets + count * 4);
  const checksum = new Uint8Array(await crypto.subtle.digest("SHA-1", body));
  const out = new Uint8Array(body.byteLength + 20);
  out.set(body);
  out.set(checksum, body.byteLength);
  return out;
}

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** CRC-32 (zlib's), as a pack index keeps one for each entry's bytes. */
function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (CRC_TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
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
