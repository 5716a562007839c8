import { LIMITS } from "../limits.ts";

/** How many type and source ids a journal keeps in memory each (LIMITS.JOURNAL_NAMES_CACHED_MAX). */
export const JOURNAL_NAMES_CACHED_MAX = LIMITS.JOURNAL_NAMES_CACHED_MAX;

/**
 * The small tables a journal's rows point into: each event type and each source (its JSON text)
 * is stored once and named by an integer id. Ids are never reused or deleted, so a cached id stays
 * right until a transaction that made it rolls back (then `forget`).
 */
export class JournalNames {
  readonly #sql: SqlStorage;
  readonly #types = new Map<string, number>();
  readonly #sources = new Map<string, number>();

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS journal_types(id INTEGER PRIMARY KEY, type TEXT NOT NULL UNIQUE)");
    sql.exec("CREATE TABLE IF NOT EXISTS journal_sources(id INTEGER PRIMARY KEY, source TEXT NOT NULL UNIQUE)");
  }

  typeId(type: string): number {
    return this.#id(this.#types, "journal_types", "type", type);
  }

  /** The id of a source, by its JSON text. */
  sourceId(sourceJson: string): number {
    return this.#id(this.#sources, "journal_sources", "source", sourceJson);
  }

  /** Drops every cached id (after a rolled-back transaction that may have made some). */
  forget(): void {
    this.#types.clear();
    this.#sources.clear();
  }

  #id(cache: Map<string, number>, table: string, column: string, value: string): number {
    const cached = cache.get(value);
    if (cached !== undefined) return cached;
    // One statement whether the name is new or not: the no-op update makes RETURNING answer both.
    const { id } = this.#sql
      .exec<{ id: number }>(`INSERT INTO ${table}(${column}) VALUES (?) ON CONFLICT(${column}) DO UPDATE SET ${column} = excluded.${column} RETURNING id`, value)
      .one();
    if (cache.size >= JOURNAL_NAMES_CACHED_MAX) cache.clear();
    cache.set(value, id);
    return id;
  }
}

/**
 * Moves a stream written before decision 0026 (one `events` table with every name spelled out on
 * every row) into the journal's tables, once, in the Durable Object's first start after the
 * upgrade, and drops the old table.
 */
export function migrateLegacyEvents(sql: SqlStorage): void {
  const legacy = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").toArray().length > 0;
  if (!legacy) return;
  sql.exec("INSERT OR IGNORE INTO journal_types(type) SELECT type FROM events GROUP BY type ORDER BY min(offset)");
  sql.exec("INSERT OR IGNORE INTO journal_sources(source) SELECT source FROM events GROUP BY source ORDER BY min(offset)");
  // `created_at` is what Date#toISOString gave: whole seconds from strftime, milliseconds from the text.
  sql.exec(`INSERT INTO journal(offset, type_id, payload, at, source_id, idempotency_key)
    SELECT e.offset, t.id, e.payload, CAST(strftime('%s', e.created_at) AS INTEGER) * 1000 + CAST(substr(e.created_at, 21, 3) AS INTEGER), s.id, e.idempotency_key
    FROM events AS e JOIN journal_types AS t ON t.type = e.type JOIN journal_sources AS s ON s.source = e.source ORDER BY e.offset`);
  sql.exec("DROP TABLE events");
}
