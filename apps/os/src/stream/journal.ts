import type { EventSource, StreamEvent } from "iterate/types";

/** An event ready to be written: validated, stamped, not yet numbered. */
export interface PendingEvent {
  type: string;
  payload: unknown;
  source: EventSource;
  idempotencyKey?: string;
}

/**
 * The append-only SQLite journal of one stream. Synchronous on purpose: a Durable Object's
 * SQLite calls commit together with the request that made them, so one `append` is one commit.
 */
export class Journal {
  readonly #sql: SqlStorage;
  readonly #path: () => string;
  #head: number;

  constructor(sql: SqlStorage, path: () => string) {
    this.#sql = sql;
    this.#path = path;
    sql.exec(`CREATE TABLE IF NOT EXISTS events(
      offset INTEGER PRIMARY KEY,
      type TEXT NOT NULL,
      payload TEXT NOT NULL,
      created_at TEXT NOT NULL,
      source TEXT NOT NULL,
      idempotency_key TEXT UNIQUE
    )`);
    this.#head = sql.exec<{ head: number | null }>("SELECT max(offset) AS head FROM events").one().head ?? 0;
  }

  /** Offset of the newest durable event; 0 for an empty stream. */
  get head(): number {
    return this.#head;
  }

  /**
   * Numbers and writes `events` with one SQL statement (the rows travel as one JSON parameter:
   * per-statement overhead, not SQLite, dominates small inserts in a Durable Object).
   */
  write(events: PendingEvent[], createdAt: string): StreamEvent[] {
    const written: StreamEvent[] = [];
    const rows: Array<[number, string, string, string, string | null]> = [];
    // Events of one append mostly share one source object: its JSON is written once.
    let lastSource: EventSource | undefined;
    let lastSourceJson = "";
    for (const event of events) {
      const offset = this.#head + rows.length + 1;
      const payload = event.payload === undefined ? {} : event.payload;
      if (event.source !== lastSource) {
        lastSource = event.source;
        lastSourceJson = JSON.stringify(event.source);
      }
      rows.push([offset, event.type, JSON.stringify(payload), lastSourceJson, event.idempotencyKey ?? null]);
      written.push(this.#toEvent(offset, event.type, payload, createdAt, event.source, event.idempotencyKey));
    }
    const [only] = rows;
    if (rows.length === 1 && only) {
      this.#sql.exec(
        "INSERT INTO events(offset, type, payload, created_at, source, idempotency_key) VALUES (?, ?, ?, ?, ?, ?)",
        only[0],
        only[1],
        only[2],
        createdAt,
        only[3],
        only[4],
      );
    } else {
      this.#sql.exec(
        `INSERT INTO events(offset, type, payload, created_at, source, idempotency_key)
         SELECT value->>0, value->>1, value->>2, ?, value->>3, value->>4 FROM json_each(?)`,
        createdAt,
        JSON.stringify(rows),
      );
    }
    this.#head += rows.length;
    return written;
  }

  /** Deletes every event (a stream deleted over the Durable Streams protocol); offsets start again at 1. */
  clear(): void {
    this.#sql.exec("DELETE FROM events");
    this.#head = 0;
  }

  /** Rolls the in-memory head back after a failed transaction. */
  resetHead(): void {
    this.#head = this.#sql.exec<{ head: number | null }>("SELECT max(offset) AS head FROM events").one().head ?? 0;
  }

  byIdempotencyKey(key: string): StreamEvent | undefined {
    const row = this.#sql.exec<{ offset: number }>("SELECT offset FROM events WHERE idempotency_key = ?", key).toArray()[0];
    return row ? this.read(row.offset - 1, row.offset + 1, 1)[0] : undefined;
  }

  /** Events with `after < offset < before`, oldest first, at most `limit`, optionally of `types`. */
  read(after: number, before: number, limit: number, types?: readonly string[]): StreamEvent[] {
    return JSON.parse(this.readJson(after, before, limit, types)) as StreamEvent[];
  }

  /**
   * The same page as one JSON array string, built by SQLite itself: one statement and one string
   * instead of a JavaScript object and two JSON.parse calls per row. Bulk readers and replays use it.
   */
  readJson(after: number, before: number, limit: number, types?: readonly string[]): string {
    const filter = types && types.length > 0 ? ` AND type IN (${types.map((_, i) => `?${i + 5}`).join(",")})` : "";
    const row = this.#sql
      .exec<{ page: string | null }>(
        `SELECT json_group_array(
           CASE WHEN idempotency_key IS NULL
             THEN json_object('streamPath', ?1, 'offset', offset, 'type', type, 'payload', json(payload), 'createdAt', created_at, 'source', json(source))
             ELSE json_object('streamPath', ?1, 'offset', offset, 'type', type, 'payload', json(payload), 'createdAt', created_at, 'source', json(source), 'idempotencyKey', idempotency_key)
           END) AS page
         FROM (SELECT * FROM events WHERE offset > ?2 AND offset < ?3${filter} ORDER BY offset LIMIT ?4)`,
        this.#path(),
        after,
        before,
        limit,
        ...(types ?? []),
      )
      .one();
    return row.page ?? "[]";
  }

  /**
   * A page in the packed wire format of `getEventsPacked`: the path once, the distinct sources and
   * commit times once each, then one array per event,
   * `[offset, type, payload, createdAtIndex, sourceIndex, idempotencyKey | null]`. Events appended
   * together share their time and source, so this is about half the bytes of plain objects, and
   * bulk reads are bound by bytes.
   */
  readPacked(after: number, before: number, limit: number): string {
    // Durable offsets are gapless, so the page is a range of primary keys with no LIMIT: each part
    // below scans that range of the table itself, instead of a page materialized once and joined
    // three times (about a third of the statement's time on a 10,000-event page).
    const until = Math.min(before, after + limit + 1);
    // Built by concatenating the stored JSON text: SQLite never re-parses a payload here.
    const row = this.#sql
      .exec<{ page: string }>(
        `WITH sources AS MATERIALIZED (SELECT source, row_number() OVER () - 1 AS s FROM (SELECT DISTINCT source FROM events WHERE offset > ?2 AND offset < ?3)),
              times AS MATERIALIZED (SELECT created_at, row_number() OVER () - 1 AS t FROM (SELECT DISTINCT created_at FROM events WHERE offset > ?2 AND offset < ?3))
         SELECT '{"streamPath":' || json_quote(?1)
           || ',"sources":[' || coalesce((SELECT group_concat(source, ',') FROM (SELECT source FROM sources ORDER BY s)), '')
           || '],"times":[' || coalesce((SELECT group_concat(json_quote(created_at), ',') FROM (SELECT created_at FROM times ORDER BY t)), '')
           || '],"rows":[' || coalesce((SELECT group_concat(line, ',') FROM (
                SELECT '[' || page.offset || ',' || json_quote(page.type) || ',' || page.payload || ',' || times.t || ',' || sources.s
                       || ',' || coalesce(json_quote(page.idempotency_key), 'null') || ']' AS line
                FROM events AS page JOIN sources USING (source) JOIN times USING (created_at)
                WHERE page.offset > ?2 AND page.offset < ?3 ORDER BY page.offset)), '')
           || ']}' AS page`,
        this.#path(),
        after,
        until,
      )
      .one();
    return row.page;
  }

  #toEvent(
    offset: number,
    type: string,
    payload: unknown,
    createdAt: string,
    source: EventSource,
    idempotencyKey: string | undefined,
  ): StreamEvent {
    const event: StreamEvent = { streamPath: this.#path(), offset, type, payload, createdAt, source };
    if (idempotencyKey !== undefined) event.idempotencyKey = idempotencyKey;
    return event;
  }
}
