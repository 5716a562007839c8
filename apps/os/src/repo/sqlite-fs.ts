/**
 * The file system isomorphic-git reads and writes a repository through, kept in the repo Durable
 * Object's SQLite. Only the object store lives here (loose objects, packs and their indexes):
 * refs are rows of their own (repo-refs.ts), moved by compare-and-swap.
 *
 * Writes are staged in memory and reach SQLite only on `flush()`. A commit or push writes its
 * objects into the stage, is checked against the limits, and is flushed only when accepted, so a
 * refused one leaves nothing behind. Files are split into chunks: a SQLite row holds at most 2 MB.
 *
 * Packs are not shown to isomorphic-git: it would read each one whole into memory (and keep it),
 * and a repository's packs together may be far larger than its isolate. A `PackedSource` answers
 * their objects one at a time, read by range, as the loose-object files isomorphic-git looks for
 * first, a push's staged pack among them; `objects/pack` lists nothing.
 */
import type { PromiseFsClient } from "isomorphic-git";
import { concat } from "../bytes.ts";

const CHUNK_BYTES = 1_048_576;
/** Chunks `readRange` keeps, most recently read: at most this many MiB of a repository in memory. */
const CHUNKS_KEPT = 8;

/** Errors shaped like Node's, which isomorphic-git tells apart by `code`. */
function fsError(code: "ENOENT" | "EISDIR" | "ENOTDIR", path: string): Error {
  return Object.assign(new Error(`${code}: ${path}`), { code });
}

interface StatLike {
  type: "file" | "dir";
  mode: number;
  size: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  uid: number;
  gid: number;
  dev: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

function stat(type: "file" | "dir", size: number): StatLike {
  return {
    type,
    mode: type === "dir" ? 0o40755 : 0o100644,
    size,
    ino: 0,
    mtimeMs: 0,
    ctimeMs: 0,
    uid: 0,
    gid: 0,
    dev: 0,
    isFile: () => type === "file",
    isDirectory: () => type === "dir",
    isSymbolicLink: () => false,
  };
}

/** A loose object's path: `objects/` and the id split after two hex digits. */
const LOOSE_OBJECT = /\/objects\/([0-9a-f]{2})\/([0-9a-f]{38})$/;
const PACK_DIR = /\/objects\/pack\/?$/;

/** Objects of stored packs, answered as loose-object files (see SqliteFs). */
export interface PackedSource {
  /** The loose-object file of `oid` (zlib of `<type> <size>\0<content>`), when a stored pack holds it. */
  looseFile(oid: string): Promise<Uint8Array | undefined>;
  /** Whether a stored pack holds `oid`. */
  has(oid: string): boolean;
}

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

/** Creates the table `SqliteFs` keeps files in; idempotent. */
export function createFsTable(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS git_files(path TEXT NOT NULL, chunk INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (path, chunk))`);
}

export class SqliteFs {
  readonly #sql: SqlStorage;
  // Staged writes (null: a staged delete), in the order they were made.
  readonly #staged = new Map<string, Uint8Array | null>();
  // Chunks read by range, most recently used last (a flush that rewrites a path drops its chunks).
  readonly #chunks = new Map<string, Uint8Array>();
  /** Bytes read from SQLite so far: what a read costs the isolate, for tests to bound. */
  bytesRead = 0;
  /** Where objects of stored packs are read from (set by the repository's store). */
  packed: PackedSource | undefined;
  /** The `fs` argument isomorphic-git takes (its `promises` field must be enumerable). */
  readonly promises: PromiseFsClient["promises"];

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    this.promises = {
      readFile: (path: string, options?: { encoding?: string } | string) => this.#readFile(path, options),
      writeFile: (path: string, data: Uint8Array | string) => this.#writeFile(path, data),
      unlink: (path: string) => this.#unlink(path),
      readdir: (path: string) => this.#readdir(path),
      mkdir: async () => undefined,
      rmdir: async () => undefined,
      stat: (path: string) => this.#stat(path),
      lstat: (path: string) => this.#stat(path),
      readlink: async (path: string) => {
        throw fsError("ENOENT", path);
      },
      symlink: async () => undefined,
      chmod: async () => undefined,
    };
  }

  /** Stages a file (for example a pushed pack) as isomorphic-git's writeFile would. */
  stage(path: string, data: Uint8Array): void {
    this.#staged.set(path, data);
    this.#touched(path);
  }

  /**
   * Counts changes to the files under `objects/pack` (staged, dropped or flushed): a reader of
   * packs lists them again only when it changed.
   */
  packsVersion = 0;

  #touched(path: string): void {
    if (path.includes("/objects/pack/")) this.packsVersion += 1;
  }

  /** Takes `path` out of the stage: it will not be written (a pushed pack kept as loose rows instead). */
  unstage(path: string): void {
    this.#staged.delete(path);
    this.#touched(path);
  }

  /** Bytes waiting in the stage (what a flush would add, at most). */
  stagedBytes(): number {
    let total = 0;
    for (const data of this.#staged.values()) total += data?.byteLength ?? 0;
    return total;
  }

  /** Whether `path` is written only in the stage, not yet in SQLite. */
  isStaged(path: string): boolean {
    return this.#staged.has(path);
  }

  /** Paths staged for writing. */
  stagedPaths(): string[] {
    return [...this.#staged].filter(([, data]) => data !== null).map(([path]) => path);
  }

  /** Drops everything staged: nothing of it reaches SQLite. Answers the paths that were staged. */
  discard(): string[] {
    const dropped = [...this.#staged.keys()];
    for (const path of dropped) this.#touched(path);
    this.#staged.clear();
    return dropped;
  }

  /** Writes the stage to SQLite. Synchronous, so it runs inside a storage transaction if asked to. */
  flush(): void {
    for (const [path, data] of this.#staged) {
      this.#touched(path);
      // A path written again (a loose object written twice) must not be read from an old chunk.
      for (const key of this.#chunks.keys()) if (key.startsWith(`${path}\0`)) this.#chunks.delete(key);
      this.#sql.exec("DELETE FROM git_files WHERE path = ?", path);
      if (data === null) continue;
      for (let offset = 0, chunk = 0; offset < data.byteLength || chunk === 0; offset += CHUNK_BYTES, chunk += 1) {
        this.#sql.exec("INSERT INTO git_files(path, chunk, data) VALUES (?, ?, ?)", path, chunk, data.subarray(offset, offset + CHUNK_BYTES));
      }
    }
    this.#staged.clear();
  }

  /** Bytes stored in SQLite (the repo's size on disk, before what is staged). */
  storedBytes(): number {
    return this.#sql.exec<{ total: number | null }>("SELECT SUM(LENGTH(data)) AS total FROM git_files").one().total ?? 0;
  }

  async #readFile(path: string, options?: { encoding?: string } | string): Promise<Uint8Array | string> {
    const data = this.#read(path) ?? (await this.#packedObject(path));
    if (data === undefined) {
      if (this.#isDir(path)) throw fsError("EISDIR", path);
      throw fsError("ENOENT", path);
    }
    const encoding = typeof options === "string" ? options : options?.encoding;
    return encoding ? DECODER.decode(data) : data;
  }

  /** A stored pack's object as the loose file isomorphic-git asked for, or undefined. */
  async #packedObject(path: string): Promise<Uint8Array | undefined> {
    const match = LOOSE_OBJECT.exec(path);
    return match && this.packed ? this.packed.looseFile(`${match[1]}${match[2]}`) : undefined;
  }

  /**
   * Bytes `[start, end)` of the file at `path` (clipped to its size), reading only the chunks
   * that hold them; undefined when there is no such file. Chunks are read whole (SQLite walks a
   * blob's overflow pages from its start even for a substring) and the last few are kept, so
   * entries read in order (a clone) cost each chunk once.
   */
  readRange(path: string, start: number, end: number): Uint8Array | undefined {
    const staged = this.#staged.get(path);
    if (staged !== undefined) return staged?.subarray(start, end);
    const parts: Uint8Array[] = [];
    for (let chunk = Math.floor(start / CHUNK_BYTES); chunk * CHUNK_BYTES < end; chunk += 1) {
      const data = this.#chunk(path, chunk);
      if (data === undefined) break;
      const from = Math.max(0, start - chunk * CHUNK_BYTES);
      parts.push(data.subarray(from, Math.max(from, end - chunk * CHUNK_BYTES)));
      if (data.byteLength < CHUNK_BYTES) break;
    }
    if (parts.length === 0) return this.fileSize(path) === undefined ? undefined : new Uint8Array(0);
    return parts.length === 1 ? parts[0] : concat(parts);
  }

  #chunk(path: string, chunk: number): Uint8Array | undefined {
    const key = `${path}\0${chunk}`;
    const cached = this.#chunks.get(key);
    if (cached) {
      this.#chunks.delete(key);
      this.#chunks.set(key, cached);
      return cached;
    }
    const row = this.#sql.exec<{ data: ArrayBuffer }>("SELECT data FROM git_files WHERE path = ? AND chunk = ?", path, chunk).toArray()[0];
    if (!row) return undefined;
    const data = new Uint8Array(row.data);
    this.bytesRead += data.byteLength;
    this.#chunks.set(key, data);
    for (const oldest of this.#chunks.keys()) {
      if (this.#chunks.size <= CHUNKS_KEPT) break;
      this.#chunks.delete(oldest);
    }
    return data;
  }

  /** The whole file at `path`, or undefined. */
  read(path: string): Uint8Array | undefined {
    return this.#read(path);
  }

  /**
   * Paths stored in SQLite (not the stage) that start with `prefix`, in the order they were last
   * stored (a flush of a path writes its rows anew; a pack's path is never flushed twice).
   */
  storedFiles(prefix: string): string[] {
    return this.#sql
      .exec<{ path: string }>(
        "SELECT path FROM git_files WHERE path >= ? AND path < ? AND chunk = 0 ORDER BY rowid",
        prefix,
        `${prefix.slice(0, -1)}${String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)}`,
      )
      .toArray()
      .map((row) => row.path);
  }

  /** The size of the file at `path` without reading it, or undefined when there is none. */
  fileSize(path: string): number | undefined {
    if (this.#staged.has(path)) return this.#staged.get(path)?.byteLength;
    const row = this.#sql.exec<{ size: number | null; chunks: number }>("SELECT SUM(LENGTH(data)) AS size, COUNT(*) AS chunks FROM git_files WHERE path = ?", path).one();
    return row.chunks === 0 ? undefined : (row.size ?? 0);
  }

  #read(path: string): Uint8Array | undefined {
    if (this.#staged.has(path)) return this.#staged.get(path) ?? undefined;
    const rows = this.#sql.exec<{ data: ArrayBuffer }>("SELECT data FROM git_files WHERE path = ? ORDER BY chunk", path).toArray();
    if (rows.length === 0) return undefined;
    for (const row of rows) this.bytesRead += row.data.byteLength;
    if (rows.length === 1) return new Uint8Array(rows[0]?.data ?? new ArrayBuffer(0));
    return concat(rows.map((row) => new Uint8Array(row.data)));
  }

  async #writeFile(path: string, data: Uint8Array | string): Promise<void> {
    // Copy: the caller may reuse its buffer after the promise settles.
    this.#staged.set(path, typeof data === "string" ? ENCODER.encode(data) : new Uint8Array(data));
    this.#touched(path);
  }

  async #unlink(path: string): Promise<void> {
    if (this.fileSize(path) === undefined) throw fsError("ENOENT", path);
    this.#staged.set(path, null);
    this.#touched(path);
  }

  async #stat(path: string): Promise<StatLike> {
    const size = this.fileSize(path);
    if (size !== undefined) return stat("file", size);
    const loose = LOOSE_OBJECT.exec(path);
    if (loose && this.packed?.has(`${loose[1]}${loose[2]}`)) return stat("file", 0);
    if (this.#isDir(path)) return stat("dir", 0);
    throw fsError("ENOENT", path);
  }

  async #readdir(path: string): Promise<string[]> {
    if (this.fileSize(path) !== undefined) throw fsError("ENOTDIR", path);
    const names = new Set<string>();
    // Packs are read through `packed`, object by object: isomorphic-git is never shown one.
    if (PACK_DIR.test(path)) throw fsError("ENOENT", path);
    for (const child of this.#under(path)) names.add(child.slice(path.length + 1).split("/")[0] ?? "");
    names.delete("");
    if (names.size === 0 && !this.#isDir(path)) throw fsError("ENOENT", path);
    return [...names].toSorted();
  }

  // Directories are implicit: a path is one when some file lives under it.
  #isDir(path: string): boolean {
    return this.#under(path).length > 0;
  }

  #under(path: string): string[] {
    const prefix = `${path.replace(/\/$/, "")}/`;
    // "/" + 1 is "0": the range holds exactly the paths that start with the prefix.
    const upper = `${prefix.slice(0, -1)}0`;
    const stored = this.#sql
      .exec<{ path: string }>("SELECT DISTINCT path FROM git_files WHERE path >= ? AND path < ?", prefix, upper)
      .toArray()
      .map((row) => row.path)
      .filter((p) => this.#staged.get(p) !== null);
    const staged = [...this.#staged].filter(([p, data]) => data !== null && p.startsWith(prefix)).map(([p]) => p);
    return [...new Set([...stored, ...staged])];
  }
}
