import type { EventSource, StreamEvent } from "iterate/types";
import { unpackEvents } from "iterate/stream/events";
import { LIMITS } from "../limits.ts";
import { JournalNames, migrateLegacyEvents } from "./journal-names.ts";

/** An event ready to be written: validated, stamped, not yet numbered. */
export interface PendingEvent {
  type: string;
  payload: unknown;
  source: EventSource;
  idempotencyKey?: string;
}

/**
 * A row's commit time as the ISO text `Date#toISOString` gives, from its epoch milliseconds
 * (`column`): exact, with no floating point, for every time a stream stamps (1970 to 9999).
 */
export function isoTimeSql(column: string): string {
  return `(strftime('%Y-%m-%dT%H:%M:%S', ${column} / 1000, 'unixepoch') || printf('.%03dZ', ${column} % 1000))`;
}

/**
 * The journal as rows with their names spelled out (`offset, type, payload, created_at, source,
 * idempotency_key`), for readers that are not on a hot path.
 */
export const JOURNAL_EVENTS_VIEW = "journal_events";

/**
 * The append-only SQLite journal of one stream. Synchronous on purpose: a Durable Object's
 * SQLite calls commit together with the request that made them, so one `append` is one commit.
 *
 * A row keeps its offset, payload and idempotency key, its commit time as epoch milliseconds, and
 * its type and source as ids into two small tables (decision 0026): events appended together
 * share a time and source, and a stream has few types, so a row is mostly its payload.
 */
export class Journal {
  readonly #sql: SqlStorage;
  readonly #path: () => string;
  readonly #names: JournalNames;
  #head: number;
  // The newest events, contiguous up to the head, exactly as `read` would answer them (RecentEvents).
  readonly #recent = new RecentEvents();

  constructor(sql: SqlStorage, path: () => string) {
    this.#sql = sql;
    this.#path = path;
    // Idempotency keys are unique, and only the events that carry one (few) are in their index: a
    // UNIQUE column would also index every NULL, one more B-tree entry per event. A journal made
    // before keeps its UNIQUE column beside this index; both hold the same rule.
    sql.exec(`CREATE TABLE IF NOT EXISTS journal(
      offset INTEGER PRIMARY KEY,
      type_id INTEGER NOT NULL,
      payload TEXT NOT NULL,
      at INTEGER NOT NULL,
      source_id INTEGER NOT NULL,
      idempotency_key TEXT
    );
    CREATE UNIQUE INDEX IF NOT EXISTS journal_idempotency_key ON journal(idempotency_key) WHERE idempotency_key IS NOT NULL`);
    this.#names = new JournalNames(sql);
    sql.exec(`CREATE VIEW IF NOT EXISTS ${JOURNAL_EVENTS_VIEW} AS
      SELECT j.offset AS offset, t.type AS type, j.payload AS payload, ${isoTimeSql("j.at")} AS created_at, s.source AS source, j.idempotency_key AS idempotency_key
      FROM journal AS j JOIN journal_types AS t ON t.id = j.type_id JOIN journal_sources AS s ON s.id = j.source_id`);
    migrateLegacyEvents(sql);
    this.#head = this.#readHead();
  }

  /** Offset of the newest durable event; 0 for an empty stream. */
  get head(): number {
    return this.#head;
  }

  /**
   * Numbers and writes `events` with one SQL statement (the rows travel as one JSON parameter:
   * per-statement overhead, not SQLite, dominates small inserts in a Durable Object). A type or
   * source the stream has not seen yet costs one more statement, once.
   *
   * Rows that differ only in their payloads (one type, one source, no idempotency keys: a Durable
   * Streams POST, most batches) send just the payloads; offset, type, time and source are bound
   * once. SQLite then reads one value per row instead of extracting five from a row array.
   */
  write(events: PendingEvent[], createdAt: string): StreamEvent[] {
    const written: StreamEvent[] = [];
    const rows: Array<[number, number, string, number, string | null]> = [];
    const at = Date.parse(createdAt);
    // Events of one append mostly share one source object: it is looked up once.
    // The same rows as text, for memory once they are in (RecentEvents).
    const recent: RecentRow[] = [];
    let lastSource: EventSource | undefined;
    let lastSourceJson = "";
    let lastSourceId = 0;
    let lastType = "";
    let lastTypeId = 0;
    let uniform = true;
    for (const event of events) {
      const offset = this.#head + rows.length + 1;
      const payload = event.payload === undefined ? {} : event.payload;
      if (event.source !== lastSource) {
        lastSource = event.source;
        lastSourceJson = JSON.stringify(event.source);
        lastSourceId = this.#names.sourceId(lastSourceJson);
      }
      if (event.type !== lastType) {
        lastType = event.type;
        lastTypeId = this.#names.typeId(event.type);
      }
      const payloadJson = JSON.stringify(payload);
      if (event.idempotencyKey !== undefined || (rows.length > 0 && (lastTypeId !== rows[0]?.[1] || lastSourceId !== rows[0]?.[3]))) uniform = false;
      rows.push([offset, lastTypeId, payloadJson, lastSourceId, event.idempotencyKey ?? null]);
      recent.push({ offset, type: event.type, payload: payloadJson, createdAt, source: lastSourceJson, idempotencyKey: event.idempotencyKey });
      written.push(this.#toEvent(offset, event.type, payload, createdAt, event.source, event.idempotencyKey));
    }
    const [only] = rows;
    if (rows.length === 1 && only) {
      this.#sql.exec("INSERT INTO journal(offset, type_id, payload, at, source_id, idempotency_key) VALUES (?, ?, ?, ?, ?, ?)", only[0], only[1], only[2], at, only[3], only[4]);
    } else if (uniform && only) {
      // json_each numbers an array's elements from 0 in `key`; `value` is a string element's text.
      this.#sql.exec(
        `INSERT INTO journal(offset, type_id, payload, at, source_id, idempotency_key)
         SELECT ? + key, ?, value, ?, ?, NULL FROM json_each(?)`,
        only[0],
        only[1],
        at,
        only[3],
        JSON.stringify(rows.map((row) => row[2])),
      );
    } else {
      this.#sql.exec(
        `INSERT INTO journal(offset, type_id, payload, at, source_id, idempotency_key)
         SELECT value->>0, value->>1, value->>2, ?, value->>3, value->>4 FROM json_each(?)`,
        at,
        JSON.stringify(rows),
      );
    }
    this.#head += rows.length;
    for (const row of recent) this.#recent.add(row);
    return written;
  }

  /**
   * Whether any event was written by a part of the platform (its source names `platform`). Sources
   * are few, so this looks at the distinct ones and then for one event of each that qualifies.
   */
  holdsPlatformFacts(): boolean {
    return (
      this.#sql
        .exec(
          `SELECT 1 FROM journal_sources AS s WHERE json_extract(s.source, '$.platform') IS NOT NULL
             AND EXISTS (SELECT 1 FROM journal AS j WHERE j.source_id = s.id) LIMIT 1`,
        )
        .toArray().length > 0
    );
  }

  /** Deletes every event (a stream deleted over the Durable Streams protocol); offsets start again at 1. */
  clear(): void {
    this.#sql.exec("DELETE FROM journal");
    this.#head = 0;
    this.#recent.forget();
  }

  /**
   * Forgets what memory holds about the tables after a failed transaction: the head, and the ids
   * of types and sources the rolled-back transaction may have added.
   */
  reset(): void {
    this.#names.forget();
    this.#recent.forget();
    this.#head = this.#readHead();
  }

  byIdempotencyKey(key: string): StreamEvent | undefined {
    const row = this.#sql.exec<{ offset: number }>("SELECT offset FROM journal WHERE idempotency_key = ?", key).toArray()[0];
    return row ? this.read(row.offset - 1, row.offset + 1, 1)[0] : undefined;
  }

  /**
   * Events with `after < offset < before`, oldest first, at most `limit`, optionally of `types`,
   * and, given `maxBytes`, no more than fit in that many bytes of stored payload after the first
   * (`#pageEnd`). A read at the head (a processor catching up, a waiter registering) is empty
   * without a statement, and a read right behind it is answered from memory (the rows just
   * written, parsed here as SQLite's answer would be), filtered by type there when it names types.
   */
  read(after: number, before: number, limit: number, types?: readonly string[], maxBytes?: number): StreamEvent[] {
    // Offsets are gapless and end at the head: nothing lies past it.
    if (after >= this.#head) return [];
    const recent = this.#recent.between(after, before, limit, this.#head, this.#path(), types, maxBytes);
    if (recent) return recent;
    // Unfiltered, the page is the packed one SQLite concatenates from the stored text (it parses no
    // payload, where json_object() would re-parse each), unpacked here into events. It numbers rows
    // from `after`, so only whole, non-negative bounds take it.
    const whole = Number.isSafeInteger(after) && after >= 0 && Number.isSafeInteger(limit) && limit >= 0;
    if ((types === undefined || types.length === 0) && whole) return unpackEvents(this.readPacked3(after, before, limit, maxBytes));
    return JSON.parse(this.readJson(after, before, limit, types, maxBytes)) as StreamEvent[];
  }

  /**
   * The same page as one JSON array string, built by SQLite itself: one statement and one string
   * instead of a JavaScript object and two JSON.parse calls per row. Bulk readers and replays use it.
   */
  readJson(after: number, before: number, limit: number, types?: readonly string[], maxBytes?: number): string {
    const filter = typeFilter(types);
    const end = this.#pageEnd(after, before, limit, maxBytes, types);
    const row = this.#sql
      .exec<{ page: string | null }>(
        `SELECT json_group_array(
           CASE WHEN page.idempotency_key IS NULL
             THEN json_object('streamPath', ?1, 'offset', page.offset, 'type', t.type, 'payload', json(page.payload), 'createdAt', ${isoTimeSql("page.at")}, 'source', json(s.source))
             ELSE json_object('streamPath', ?1, 'offset', page.offset, 'type', t.type, 'payload', json(page.payload), 'createdAt', ${isoTimeSql("page.at")}, 'source', json(s.source), 'idempotencyKey', page.idempotency_key)
           END) AS page
         FROM (SELECT * FROM journal WHERE offset > ?2 AND offset < ?3${filter} ORDER BY offset LIMIT ?4) AS page
         JOIN journal_types AS t ON t.id = page.type_id JOIN journal_sources AS s ON s.id = page.source_id`,
        this.#path(),
        after,
        end,
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
  readPacked(after: number, before: number, limit: number, maxBytes?: number): string {
    // Durable offsets are gapless, so the page is a range of primary keys with no LIMIT: each part
    // below scans that range of the table itself, instead of a page materialized once and joined.
    const until = this.#pageEnd(after, Math.min(before, after + limit + 1), undefined, maxBytes);
    // Built by concatenating the stored JSON text: SQLite never re-parses a payload here.
    const row = this.#sql
      .exec<{ page: string }>(
        `WITH sources AS MATERIALIZED (SELECT source_id, row_number() OVER (ORDER BY source_id) - 1 AS s FROM (SELECT DISTINCT source_id FROM journal WHERE offset > ?2 AND offset < ?3)),
              times AS MATERIALIZED (SELECT at, row_number() OVER (ORDER BY at) - 1 AS t FROM (SELECT DISTINCT at FROM journal WHERE offset > ?2 AND offset < ?3))
         SELECT '{"streamPath":' || json_quote(?1)
           || ',"sources":[' || coalesce((SELECT group_concat(source, ',') FROM (SELECT j.source FROM sources JOIN journal_sources AS j ON j.id = sources.source_id ORDER BY s)), '')
           || '],"times":[' || coalesce((SELECT group_concat(json_quote(${isoTimeSql("at")}), ',') FROM (SELECT at FROM times ORDER BY t)), '')
           || '],"rows":[' || coalesce((SELECT group_concat(line, ',') FROM (
                SELECT '[' || page.offset || ',' || json_quote(types.type) || ',' || page.payload || ',' || times.t || ',' || sources.s
                       || ',' || coalesce(json_quote(page.idempotency_key), 'null') || ']' AS line
                FROM journal AS page JOIN journal_types AS types ON types.id = page.type_id JOIN sources USING (source_id) JOIN times USING (at)
                WHERE page.offset > ?2 AND page.offset < ?3 ORDER BY page.offset)), '')
           || ']}' AS page`,
        this.#path(),
        after,
        until,
      )
      .one();
    return row.page;
  }

  /**
   * A page in packed format 2, for readers that name it. Offsets are gapless, so rows carry none:
   * row i is offset `from + i`. A row is `[typeId, payload, sourceId, idempotencyKey | null,
   * createdAtMs]`, and `types` and `sources` map the ids the page uses to their names. SQLite
   * formats each row with one printf, no join and no time text. (Sending a time only when it
   * changes saved bytes but cost more than it saved: SQLite's window function doubled the build.)
   */
  readPacked2(after: number, before: number, limit: number, maxBytes?: number): string {
    return this.#numberedPage(
      2,
      `names AS MATERIALIZED (SELECT DISTINCT type_id, source_id FROM journal WHERE offset > ?2 AND offset < ?3)`,
      `'},"rows":[' || coalesce((SELECT group_concat(line, ',') FROM (
         SELECT printf('[%d,%s,%d,%s,%d]', type_id, payload, source_id, coalesce(json_quote(idempotency_key), 'null'), at) AS line
         FROM journal WHERE offset > ?2 AND offset < ?3 ORDER BY offset)), '')`,
      after,
      before,
      limit,
      maxBytes,
    );
  }

  /**
   * A page in packed format 3, for readers that name it (`readEvents`, and `read` here). The
   * payloads come as one array, each stored text as it is; what events share is said once per
   * run: a run starts at an offset where the type, the source or the commit time differs from
   * the row before, as `[offset, typeId, sourceId, createdAtMs]` flattened into `runs`, and lasts
   * until the next run's offset. Idempotency keys are listed by offset. Offsets are gapless, so
   * payload i is offset `from + i`. Against format 2 there is no per-row printf and no per-row
   * array to parse: a 10,000-event page of small events is about 40% fewer bytes, and both
   * SQLite and the reader do less. (The runs come from joining each row to the one before it by
   * primary key: a window function over the range took six times as long. Every type and source
   * of the range starts a run, so the names come from the runs, not from another scan.)
   */
  readPacked3(after: number, before: number, limit: number, maxBytes?: number): string {
    return this.#numberedPage(
      3,
      `runs AS MATERIALIZED (SELECT row.offset, row.type_id, row.source_id, row.at
         FROM journal AS row LEFT JOIN journal AS before ON before.offset = row.offset - 1
         WHERE row.offset > ?2 AND row.offset < ?3
           AND (row.offset = ?4 OR before.offset IS NULL OR before.type_id <> row.type_id OR before.source_id <> row.source_id OR before.at <> row.at)),
       names AS MATERIALIZED (SELECT DISTINCT type_id, source_id FROM runs)`,
      `'},"keys":{' || coalesce((SELECT group_concat('"' || offset || '":' || json_quote(idempotency_key), ',')
         FROM journal WHERE offset > ?2 AND offset < ?3 AND idempotency_key IS NOT NULL), '')
       || '},"runs":[' || coalesce((SELECT group_concat(run, ',') FROM (
         SELECT offset || ',' || type_id || ',' || source_id || ',' || at AS run FROM runs ORDER BY offset)), '')
       || '],"payloads":[' || coalesce((SELECT group_concat(payload, ',') FROM (SELECT payload FROM journal WHERE offset > ?2 AND offset < ?3 ORDER BY offset)), '')`,
      after,
      before,
      limit,
      maxBytes,
    );
  }

  /**
   * A packed page of formats 2 and up: the format, the path, `from` and the type and source names
   * the range uses, then `rest` (SQL text that ends the open `sources` object and adds the
   * format's own fields), closed with `]}`. `ctes` defines at least `names` (the range's distinct
   * `type_id, source_id`). Parameters: ?1 the path, ?2 and ?3 the exclusive bounds of the range,
   * ?4 its first offset.
   */
  #numberedPage(format: 2 | 3, ctes: string, rest: string, after: number, before: number, limit: number, maxBytes: number | undefined): string {
    const until = this.#pageEnd(after, Math.min(before, after + limit + 1), undefined, maxBytes);
    const row = this.#sql
      .exec<{ page: string }>(
        `WITH ${ctes}
         SELECT '{"format":${format},"streamPath":' || json_quote(?1) || ',"from":' || ?4
           || ',"types":{' || coalesce((SELECT group_concat('"' || id || '":' || json_quote(type), ',') FROM journal_types WHERE id IN (SELECT type_id FROM names)), '')
           || '},"sources":{' || coalesce((SELECT group_concat('"' || id || '":' || source, ',') FROM journal_sources WHERE id IN (SELECT source_id FROM names)), '')
           || ${rest}
           || ']}' AS page`,
        this.#path(),
        after,
        until,
        after + 1,
      )
      .one();
    return row.page;
  }

  /**
   * Where a page of the rows with `after < offset < before` (of `types`, at most `limit` when
   * given) ends when it may hold `maxBytes` of stored payload: `before` when they all fit, else
   * the offset of the first row past it, never the page's first row (a page always has one
   * event). Usually the page fits, and one aggregate over the range finds that out (it reads each
   * payload's size from its row header, not its text: about 4% of building a format 3 page of
   * 10,000 small events). Only a page that does not pays for the running sum that finds the cut.
   * Pages that are a range of primary keys pass no `limit`: `before` bounds them already, and a
   * LIMIT would make the range a co-routine instead of a plain scan.
   */
  #pageEnd(after: number, before: number, limit: number | undefined, maxBytes: number | undefined, types?: readonly string[]): number {
    if (maxBytes === undefined) return before;
    const row = this.#sql
      .exec<{ cut: number | null }>(
        `WITH page AS NOT MATERIALIZED (SELECT offset, octet_length(payload) AS bytes FROM journal
           WHERE offset > ?1 AND offset < ?2${typeFilter(types)}${limit === undefined ? "" : " ORDER BY offset LIMIT ?3"})
         SELECT CASE WHEN coalesce((SELECT sum(bytes) FROM page), 0) <= ?4 THEN NULL
           ELSE (SELECT min(offset) FROM (SELECT offset, row_number() OVER w AS n, sum(bytes) OVER w AS running FROM page WINDOW w AS (ORDER BY offset ROWS UNBOUNDED PRECEDING))
                 WHERE n > 1 AND running > ?4) END AS cut`,
        after,
        before,
        limit ?? -1,
        maxBytes,
        ...(types ?? []),
      )
      .one();
    return row.cut ?? before;
  }

  #readHead(): number {
    return this.#sql.exec<{ head: number | null }>("SELECT max(offset) AS head FROM journal").one().head ?? 0;
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

/** SQL that keeps the rows of `types` (bound from ?5 on), or nothing when no types are named. */
function typeFilter(types: readonly string[] | undefined): string {
  return types && types.length > 0 ? ` AND type_id IN (SELECT id FROM journal_types WHERE type IN (${types.map((_, i) => `?${i + 5}`).join(",")}))` : "";
}

/** A row as `RecentEvents` keeps it: its JSON text, parsed only when read. */
interface RecentRow {
  offset: number;
  type: string;
  payload: string;
  createdAt: string;
  source: string;
  idempotencyKey: string | undefined;
}

/**
 * The newest rows of a journal, contiguous and ending at its head, as JSON text: at most
 * JOURNAL_RECENT_MAX_EVENTS rows and JOURNAL_RECENT_MAX_CHARS characters of payload (oldest
 * dropped first, and let go of at once). Emptied when a transaction is undone or the journal
 * cleared; filled again by the next writes. Each read parses its own events, as SQLite's answer
 * is parsed, so no two readers share an object.
 */
class RecentEvents {
  #rows: Array<RecentRow | undefined> = [];
  #start = 0;
  #chars = 0;

  add(row: RecentRow): void {
    const last = this.#rows.at(-1);
    // Not contiguous (the first write after a reset): start again from this one.
    if (last !== undefined && last.offset + 1 !== row.offset) this.forget();
    this.#rows.push(row);
    this.#chars += row.payload.length;
    while (this.#rows.length - this.#start > LIMITS.JOURNAL_RECENT_MAX_EVENTS || (this.#chars > LIMITS.JOURNAL_RECENT_MAX_CHARS && this.#rows.length - this.#start > 1)) {
      this.#chars -= (this.#rows[this.#start] as RecentRow).payload.length;
      this.#rows[this.#start] = undefined;
      this.#start += 1;
    }
    // Compact the emptied front now and then, not on every row.
    if (this.#start > 256 && this.#start * 2 > this.#rows.length) {
      this.#rows = this.#rows.slice(this.#start);
      this.#start = 0;
    }
  }

  forget(): void {
    this.#rows = [];
    this.#start = 0;
    this.#chars = 0;
  }

  /**
   * The events with `after < offset < before`, at most `limit` (0 or more), of `types` when named,
   * when memory holds every row of that range and `maxBytes` (when given) cannot cut the page;
   * else undefined. A character of text is at most 3 bytes of UTF-8, so a page of payloads of at
   * most `maxBytes / 3` characters fits without measuring it: with JOURNAL_RECENT_MAX_CHARS well
   * under READ_PAGE_MAX_BYTES / 3, memory answers every page it holds.
   */
  between(after: number, before: number, limit: number, head: number, streamPath: string, types?: readonly string[], maxBytes?: number): StreamEvent[] | undefined {
    const first = this.#rows[this.#start];
    const last = this.#rows.at(-1);
    if (first === undefined || last === undefined || last.offset !== head || after < first.offset - 1 || after >= head || !(limit >= 0)) return undefined;
    if (!Number.isSafeInteger(after)) return undefined;
    const from = this.#start + (after - (first.offset - 1));
    const end = Math.min(this.#rows.length, from + Math.max(0, before - after - 1));
    const wanted = types === undefined || types.length === 0 ? undefined : new Set(types);
    const events: StreamEvent[] = [];
    let chars = 0;
    for (let i = from; i < end && events.length < limit; i++) {
      const row = this.#rows[i] as RecentRow;
      if (wanted && !wanted.has(row.type)) continue;
      chars += row.payload.length;
      // SQLite measures the page and says where it ends.
      if (maxBytes !== undefined && chars * 3 > maxBytes) return undefined;
      const event: StreamEvent = { streamPath, offset: row.offset, type: row.type, payload: JSON.parse(row.payload), createdAt: row.createdAt, source: JSON.parse(row.source) };
      if (row.idempotencyKey !== undefined) event.idempotencyKey = row.idempotencyKey;
      events.push(event);
    }
    return events;
  }
}
