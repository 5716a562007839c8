import type { EventSource, StreamEvent } from "iterate/types";

interface EventRow extends Record<string, SqlStorageValue> {
  offset: number;
  type: string;
  payload: string;
  created_at: string;
  source: string;
  idempotency_key: string | null;
}

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

  /** Numbers and writes `events` (the caller holds the transaction). */
  write(events: PendingEvent[], createdAt: string): StreamEvent[] {
    const written: StreamEvent[] = [];
    for (const event of events) {
      const offset = this.#head + 1;
      const payload = JSON.stringify(event.payload ?? {});
      const source = JSON.stringify(event.source);
      this.#sql.exec(
        "INSERT INTO events(offset, type, payload, created_at, source, idempotency_key) VALUES (?, ?, ?, ?, ?, ?)",
        offset,
        event.type,
        payload,
        createdAt,
        source,
        event.idempotencyKey ?? null,
      );
      this.#head = offset;
      written.push(this.#toEvent(offset, event.type, event.payload ?? {}, createdAt, event.source, event.idempotencyKey));
    }
    return written;
  }

  /** Rolls the in-memory head back after a failed transaction. */
  resetHead(): void {
    this.#head = this.#sql.exec<{ head: number | null }>("SELECT max(offset) AS head FROM events").one().head ?? 0;
  }

  byIdempotencyKey(key: string): StreamEvent | undefined {
    const row = this.#sql.exec<EventRow>("SELECT * FROM events WHERE idempotency_key = ?", key).toArray()[0];
    return row ? this.#fromRow(row) : undefined;
  }

  /** Events with `after < offset < before`, oldest first, at most `limit`, optionally of `types`. */
  read(after: number, before: number, limit: number, types?: readonly string[]): StreamEvent[] {
    const cursor =
      types && types.length > 0
        ? this.#sql.exec<EventRow>(
            `SELECT * FROM events WHERE offset > ? AND offset < ? AND type IN (${types.map(() => "?").join(",")}) ORDER BY offset LIMIT ?`,
            after,
            before,
            ...types,
            limit,
          )
        : this.#sql.exec<EventRow>("SELECT * FROM events WHERE offset > ? AND offset < ? ORDER BY offset LIMIT ?", after, before, limit);
    const events: StreamEvent[] = [];
    for (const row of cursor) events.push(this.#fromRow(row));
    return events;
  }

  /** The same rows as `read`, serialised straight to one JSON array without building objects twice. */
  readJson(after: number, before: number, limit: number): string {
    const path = JSON.stringify(this.#path());
    const parts: string[] = [];
    for (const row of this.#sql.exec<EventRow>(
      "SELECT * FROM events WHERE offset > ? AND offset < ? ORDER BY offset LIMIT ?",
      after,
      before,
      limit,
    )) {
      const key = row.idempotency_key === null ? "" : `,"idempotencyKey":${JSON.stringify(row.idempotency_key)}`;
      parts.push(
        `{"streamPath":${path},"offset":${row.offset},"type":${JSON.stringify(row.type)},"payload":${row.payload},"createdAt":"${row.created_at}","source":${row.source}${key}}`,
      );
    }
    return `[${parts.join(",")}]`;
  }

  #fromRow(row: EventRow): StreamEvent {
    return this.#toEvent(
      row.offset,
      row.type,
      JSON.parse(row.payload),
      row.created_at,
      JSON.parse(row.source) as EventSource,
      row.idempotency_key ?? undefined,
    );
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
