import { utf8ByteLength } from "iterate/stream/events";
import { LIMITS } from "../limits.ts";
import type { BuiltWorker } from "../worker-loader/worker-build.ts";

// A SQLite row holds at most 2 MB. A built worker whose JSON is larger is kept in parts of this
// many UTF-16 units: each is at most 3 bytes of UTF-8 a unit, so a part fits a row whatever the
// characters, and a part never ends inside a surrogate pair (a lone half would not survive UTF-8).
const PART_CHARS = 600_000;

/** Artifacts the project keeps in its SQLite, whole or in parts: the newest this many of each kind. */
const KEPT = 4;

// The stores holding a large artifact in memory in this isolate, least recently used first, and
// the characters they hold together (PROJECT_ARTIFACTS_IN_MEMORY_MAX_CHARS): each project's own
// bound is one artifact, but projects are many and, locally, share one process.
const holding = new Set<ArtifactStore>();
let heldChars = 0;

/** Characters of large artifacts kept in memory in this isolate (tests). */
export function artifactCharsInMemory(): number {
  return heldChars;
}

/**
 * Built project workers by content key, in the project's SQLite, so that a restart does not build
 * again. One whose JSON is too big for a row (`PROJECT_ARTIFACT_MAX_CHARS`, counted in UTF-8
 * bytes) is kept in parts, and also in memory, the project's newest only, so that requests to the
 * project's host do not each read and parse it. What every project keeps in memory together is
 * bounded; one let go is read from its parts again, never built again.
 */
export class ArtifactStore {
  readonly #sql: SqlStorage;
  #large: { built: BuiltWorker; chars: number } | undefined;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS project_artifacts (hash TEXT PRIMARY KEY, built TEXT NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS project_artifact_parts (hash TEXT NOT NULL, part INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (hash, part))");
  }

  get(hash: string): BuiltWorker | undefined {
    const large = this.#large;
    if (large?.built.hash === hash) {
      holding.delete(this);
      holding.add(this);
      return large.built;
    }
    const row = this.#sql.exec<{ built: string }>("SELECT built FROM project_artifacts WHERE hash = ?", hash).toArray()[0];
    if (row) return JSON.parse(row.built) as BuiltWorker;
    const parts = this.#sql.exec<{ text: string }>("SELECT text FROM project_artifact_parts WHERE hash = ? ORDER BY part", hash).toArray();
    if (parts.length === 0) return undefined;
    const text = parts.map((part) => part.text).join("");
    const built = JSON.parse(text) as BuiltWorker;
    this.#hold(built, text.length);
    return built;
  }

  /** Keeps `built`: in a row, or in parts and in memory when it is too big for one. */
  put(built: BuiltWorker): void {
    const text = JSON.stringify(built);
    if (text.length <= LIMITS.PROJECT_ARTIFACT_MAX_CHARS && utf8ByteLength(text) <= LIMITS.PROJECT_ARTIFACT_MAX_CHARS) {
      this.#sql.exec("INSERT OR REPLACE INTO project_artifacts (hash, built) VALUES (?, ?)", built.hash, text);
      this.#sql.exec(`DELETE FROM project_artifacts WHERE rowid NOT IN (SELECT rowid FROM project_artifacts ORDER BY rowid DESC LIMIT ${KEPT})`);
      return;
    }
    this.#sql.exec("DELETE FROM project_artifact_parts WHERE hash = ?", built.hash);
    let part = 0;
    for (let at = 0; at < text.length; part++) {
      let end = Math.min(text.length, at + PART_CHARS);
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
      this.#sql.exec("INSERT INTO project_artifact_parts (hash, part, text) VALUES (?, ?, ?)", built.hash, part, text.slice(at, end));
      at = end;
    }
    this.#sql.exec(
      `DELETE FROM project_artifact_parts WHERE hash NOT IN (SELECT hash FROM project_artifact_parts WHERE part = 0 ORDER BY rowid DESC LIMIT ${KEPT})`,
    );
    this.#hold(built, text.length);
  }

  // Keeps `built` in memory as this project's large artifact, and lets the least recently used of
  // every project's go while they hold more than the isolate's bound together.
  #hold(built: BuiltWorker, chars: number): void {
    this.#letGo();
    this.#large = { built, chars };
    holding.add(this);
    heldChars += chars;
    for (const oldest of holding) {
      if (heldChars <= LIMITS.PROJECT_ARTIFACTS_IN_MEMORY_MAX_CHARS || oldest === this) break;
      oldest.#letGo();
    }
  }

  #letGo(): void {
    if (!this.#large) return;
    heldChars -= this.#large.chars;
    this.#large = undefined;
    holding.delete(this);
  }
}
