/**
 * The file system isomorphic-git reads and writes a repository through, kept in the repo Durable
 * Object's SQLite. Only the object store lives here (loose objects, packs and their indexes):
 * refs are rows of their own (repo-refs.ts), moved by compare-and-swap.
 *
 * Writes are staged in memory and reach SQLite only on `flush()`. A commit or push writes its
 * objects into the stage, is checked against the limits, and is flushed only when accepted, so a
 * refused one leaves nothing behind. Files are split into chunks: a SQLite row holds at most 2 MB.
 */
import type { PromiseFsClient } from "isomorphic-git";

const CHUNK_BYTES = 1_048_576;

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
    this.#staged.clear();
    return dropped;
  }

  /** Writes the stage to SQLite. Synchronous, so it runs inside a storage transaction if asked to. */
  flush(): void {
    for (const [path, data] of this.#staged) {
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
    const data = this.#read(path);
    if (data === undefined) {
      if (this.#isDir(path)) throw fsError("EISDIR", path);
      throw fsError("ENOENT", path);
    }
    const encoding = typeof options === "string" ? options : options?.encoding;
    return encoding ? DECODER.decode(data) : data;
  }

  #read(path: string): Uint8Array | undefined {
    if (this.#staged.has(path)) return this.#staged.get(path) ?? undefined;
    const rows = this.#sql.exec<{ data: ArrayBuffer }>("SELECT data FROM git_files WHERE path = ? ORDER BY chunk", path).toArray();
    if (rows.length === 0) return undefined;
    if (rows.length === 1) return new Uint8Array(rows[0]?.data ?? new ArrayBuffer(0));
    const total = rows.reduce((sum, row) => sum + row.data.byteLength, 0);
    const out = new Uint8Array(total);
    let at = 0;
    for (const row of rows) {
      out.set(new Uint8Array(row.data), at);
      at += row.data.byteLength;
    }
    return out;
  }

  async #writeFile(path: string, data: Uint8Array | string): Promise<void> {
    // Copy: the caller may reuse its buffer after the promise settles.
    this.#staged.set(path, typeof data === "string" ? ENCODER.encode(data) : new Uint8Array(data));
  }

  async #unlink(path: string): Promise<void> {
    if (this.#read(path) === undefined) throw fsError("ENOENT", path);
    this.#staged.set(path, null);
  }

  async #stat(path: string): Promise<StatLike> {
    const data = this.#read(path);
    if (data !== undefined) return stat("file", data.byteLength);
    if (this.#isDir(path)) return stat("dir", 0);
    throw fsError("ENOENT", path);
  }

  async #readdir(path: string): Promise<string[]> {
    if (this.#read(path) !== undefined) throw fsError("ENOTDIR", path);
    const names = new Set<string>();
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
