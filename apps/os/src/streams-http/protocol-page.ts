import { LIMITS } from "../limits.ts";
import { JOURNAL_EVENTS_VIEW, isoTimeSql } from "../stream/journal.ts";
import { BYTES_APPENDED, MESSAGE_APPENDED, bytesOfPayload, isJsonMode, type BytesPayload } from "./message-mapping.ts";

/** One read response's worth of events, rendered for the protocol. */
export interface ProtocolPage {
  /** JSON mode: a JSON array; byte mode: the bytes. */
  body: string | Uint8Array;
  /** Journal offset of the last event in the page, or the offset read after when it is empty. */
  last: number;
  count: number;
}

/**
 * Reads the page after `after` and renders it for a stream of `contentType`. JSON-mode pages are
 * built by SQLite from the stored payload text (no parse per message); at most
 * STREAMS_HTTP_READ_PAGE_EVENTS events and STREAMS_HTTP_READ_PAGE_BYTES of payload, but always
 * the first event, so every read makes progress.
 */
export function readPage(sql: SqlStorage, path: string, after: number, contentType: string, upTo = Number.MAX_SAFE_INTEGER): ProtocolPage {
  const window = `WITH page AS (
      SELECT offset, type_id, payload, at, source_id,
             sum(length(payload)) OVER (ORDER BY offset ROWS UNBOUNDED PRECEDING) AS running
      FROM (SELECT * FROM journal WHERE offset > ?1 AND offset <= ?5 ORDER BY offset LIMIT ?2)),
    kept AS (SELECT * FROM page WHERE running <= ?3 OR offset = (SELECT min(offset) FROM page) ORDER BY offset)`;
  const pageLimits = [after, LIMITS.STREAMS_HTTP_READ_PAGE_EVENTS, LIMITS.STREAMS_HTTP_READ_PAGE_BYTES] as const;
  if (isJsonMode(contentType)) {
    // Usually the event limit ends a page long before its bytes do: one aggregate over the range
    // (it copies no payload) finds that out, and the page is then built over that plain range.
    // The running sum over a window copies every row into a scratch table, so only a page whose
    // events are larger than the byte limit allows pays for it.
    const whole = sql
      .exec<{ last: number | null; bytes: number | null }>(
        // octet_length reads a payload's size from its row header without loading its text; bytes
        // are at least characters, so a range that fits here fits the running sum's test too.
        "SELECT max(offset) AS last, sum(octet_length(payload)) AS bytes FROM (SELECT offset, payload FROM journal WHERE offset > ?1 AND offset <= ?3 ORDER BY offset LIMIT ?2)",
        after,
        LIMITS.STREAMS_HTTP_READ_PAGE_EVENTS,
        upTo,
      )
      .one();
    if (whole.last === null) return { body: "[]", last: after, count: 0 };
    const source =
      (whole.bytes ?? 0) <= LIMITS.STREAMS_HTTP_READ_PAGE_BYTES
        ? { sql: "WITH kept AS (SELECT offset, type_id, payload, at, source_id FROM journal WHERE offset > ?1 AND offset <= ?5 ORDER BY offset)", bounds: [after, whole.last] }
        : { sql: window, bounds: undefined };
    // A message is its payload text as stored; only another writer's event needs its names.
    const row = sql
      .exec<{ n: number; last: number | null; body: string | null }>(
        `${source.sql}
         SELECT count(*) AS n, max(offset) AS last, group_concat(CASE WHEN type_id = (SELECT id FROM journal_types WHERE type = ?4) THEN payload ELSE
           (SELECT json_object('streamPath', ?6, 'offset', kept.offset, 'type', t.type, 'payload', json(kept.payload), 'createdAt', ${isoTimeSql("kept.at")}, 'source', json(s.source))
            FROM journal_types AS t, journal_sources AS s WHERE t.id = kept.type_id AND s.id = kept.source_id)
         END, ',') AS body FROM kept`,
        // The plain range binds no limits (?2, ?3 unused there): the aggregate found its end.
        ...(source.bounds ? [source.bounds[0], null, null] : pageLimits),
        MESSAGE_APPENDED,
        source.bounds ? source.bounds[1] : upTo,
        path,
      )
      .one();
    return { body: `[${row.body ?? ""}]`, last: row.last ?? after, count: row.n };
  }
  const rows = sql
    .exec<{ offset: number; type: string; payload: string; created_at: string; source: string }>(
      `${window} SELECT kept.offset, t.type, kept.payload, ${isoTimeSql("kept.at")} AS created_at, s.source
       FROM kept JOIN journal_types AS t ON t.id = kept.type_id JOIN journal_sources AS s ON s.id = kept.source_id
       WHERE ?4 IS NOT NULL AND ?6 IS NOT NULL ORDER BY kept.offset`,
      ...pageLimits,
      BYTES_APPENDED,
      upTo,
      path,
    )
    .toArray();
  const parts = rows.map((row) => bytesOfRow(row, path));
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const body = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    body.set(part, at);
    at += part.length;
  }
  return { body, last: rows.at(-1)?.offset ?? after, count: rows.length };
}

/**
 * A byte-mode stream's view of one event: the bytes of BYTES_APPENDED, the JSON text of a
 * message, or any other event as one line of JSON (so a Cap'n Web writer's event reads as NDJSON).
 */
function bytesOfRow(row: { offset: number; type: string; payload: string; created_at: string; source: string }, path: string): Uint8Array {
  if (row.type === BYTES_APPENDED) return bytesOfPayload(JSON.parse(row.payload) as BytesPayload);
  if (row.type === MESSAGE_APPENDED) return new TextEncoder().encode(`${row.payload}\n`);
  const event = { streamPath: path, offset: row.offset, type: row.type, payload: JSON.parse(row.payload) as unknown, createdAt: row.created_at, source: JSON.parse(row.source) as unknown };
  return new TextEncoder().encode(`${JSON.stringify(event)}\n`);
}

/** The stored events after `after` up to `upTo`, as event inputs for a fork to append (types and payloads only). */
export function eventInputsBetween(sql: SqlStorage, after: number, upTo: number, limit: number): Array<{ type: string; payload: unknown }> {
  return sql
    .exec<{ type: string; payload: string }>(`SELECT type, payload FROM ${JOURNAL_EVENTS_VIEW} WHERE offset > ? AND offset <= ? ORDER BY offset LIMIT ?`, after, upTo, limit)
    .toArray()
    .map((row) => ({ type: row.type, payload: JSON.parse(row.payload) as unknown }));
}
