import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";

/** One ref move: `from` null creates the ref, `to` null deletes it. */
export interface RefUpdate {
  ref: string;
  from: string | null;
  to: string | null;
}

/** A fact to append to the repo's stream once the refs have moved (see repo-outbox.ts). */
export interface PendingEvent {
  type: string;
  payload: Record<string, unknown>;
  principal: string;
  origin: string;
}

/**
 * The repository's refs and its birth row, in SQLite. Refs move only through `moveRefs`: every
 * update in one call is checked against what it expects (compare-and-swap) and applied in one
 * transaction, together with the facts to announce. Objects are always written before (see
 * repo-store.ts), so a ref never names an object that is not stored.
 */
export class RepoRefs {
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    const sql = storage.sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS repo_meta(id INTEGER PRIMARY KEY CHECK (id = 1), created_at TEXT NOT NULL, default_branch TEXT NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS refs(name TEXT PRIMARY KEY, oid TEXT NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS outbox(seq INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT NULL)`);
  }

  /** The birth row, or undefined before `create`. */
  meta(): { createdAt: string; defaultBranch: string } | undefined {
    const row = this.#storage.sql.exec<{ created_at: string; default_branch: string }>("SELECT created_at, default_branch FROM repo_meta WHERE id = 1").toArray()[0];
    return row ? { createdAt: row.created_at, defaultBranch: row.default_branch } : undefined;
  }

  /** Writes the birth row and its fact once; answers false when the repo already existed. */
  create(defaultBranch: string, event: PendingEvent): boolean {
    return this.#storage.transactionSync(() => {
      if (this.meta()) return false;
      this.#storage.sql.exec("INSERT INTO repo_meta(id, created_at, default_branch) VALUES (1, ?, ?)", new Date().toISOString(), defaultBranch);
      this.#enqueue(event);
      return true;
    });
  }

  /** The commit `ref` (a full ref name) points at, or undefined. */
  get(ref: string): string | undefined {
    return this.#storage.sql.exec<{ oid: string }>("SELECT oid FROM refs WHERE name = ?", ref).toArray()[0]?.oid;
  }

  /** Every ref, by name. */
  all(): Array<{ ref: string; oid: string }> {
    return this.#storage.sql.exec<{ name: string; oid: string }>("SELECT name, oid FROM refs ORDER BY name").toArray().map((row) => ({ ref: row.name, oid: row.oid }));
  }

  /**
   * REPO_BRANCHES_MAX's refusal, before anything is written: a push's objects are flushed before
   * its refs move, and a move the count would refuse must not leave them stored. (`moveRefs`
   * checks again, inside its transaction.)
   */
  checkCount(updates: RefUpdate[]): void {
    let count = this.#storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM refs").one().n;
    const counted = new Set<string>();
    for (const update of updates) {
      if (counted.has(update.ref)) continue;
      counted.add(update.ref);
      const exists = this.get(update.ref) !== undefined;
      if (update.to === null && exists) count -= 1;
      if (update.to !== null && !exists) count += 1;
    }
    if (count > LIMITS.REPO_BRANCHES_MAX) throw tooManyBranches();
  }

  /**
   * Moves refs all or none: each must still point where its update expects (else OFFSET_CONFLICT
   * and nothing moves). The facts are queued in the same transaction, so a move is never left
   * unannounced.
   */
  moveRefs(updates: RefUpdate[], events: PendingEvent[]): void {
    this.#storage.transactionSync(() => {
      for (const update of updates) {
        const current = this.get(update.ref) ?? null;
        if (current !== update.from) {
          throw new ItxError("OFFSET_CONFLICT", `${update.ref} is at ${current ?? "nothing"}, not ${update.from ?? "nothing"}: fetch, rebase and try again`, {
            details: { ref: update.ref, head: current, expected: update.from },
          });
        }
        if (update.to === null) this.#storage.sql.exec("DELETE FROM refs WHERE name = ?", update.ref);
        else this.#storage.sql.exec("INSERT INTO refs(name, oid) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET oid = excluded.oid", update.ref, update.to);
      }
      const count = this.#storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM refs").one().n;
      if (count > LIMITS.REPO_BRANCHES_MAX) throw tooManyBranches();
      for (const event of events) this.#enqueue(event);
    });
  }

  /** Facts not yet on the stream, oldest first. */
  pending(): Array<{ seq: number; event: PendingEvent }> {
    return this.#storage.sql
      .exec<{ seq: number; event: string }>("SELECT seq, event FROM outbox ORDER BY seq")
      .toArray()
      .map((row) => ({ seq: row.seq, event: JSON.parse(row.event) as PendingEvent }));
  }

  /** Forgets facts that are on the stream. */
  delivered(seq: number): void {
    this.#storage.sql.exec("DELETE FROM outbox WHERE seq <= ?", seq);
  }

  #enqueue(event: PendingEvent): void {
    this.#storage.sql.exec("INSERT INTO outbox(event) VALUES (?)", JSON.stringify(event));
  }
}

function tooManyBranches(): ItxError {
  return new ItxError("INVALID_ARGUMENT", `a repository has at most ${LIMITS.REPO_BRANCHES_MAX} branches`, { details: limitDetails("REPO_BRANCHES_MAX") });
}
