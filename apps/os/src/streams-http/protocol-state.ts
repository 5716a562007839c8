import { LIMITS } from "../limits.ts";

/**
 * What the Durable Streams protocol keeps about one stream besides its events: its content type,
 * expiry, whether it is closed (and by which producer write), the last `Stream-Seq`, fork
 * bookkeeping, and each idempotent producer's epoch and last sequence number. It lives in the
 * Stream Durable Object's SQLite beside the journal and changes in the same turn as the append it
 * accompanies (decision 0013): deduplication state, like idempotency keys, not a fact of the stream.
 */
export interface ProtocolMeta {
  contentType: string;
  ttlSeconds?: number;
  expiresAt?: string;
  closed: boolean;
  closedBy?: ProducerTuple;
  lastStreamSeq?: string;
  /** Milliseconds since the epoch of the last read or append (TTL slides from it). */
  lastAccess: number;
  /** Made by a PUT (not by a first Cap'n Web append): only these may be deleted over HTTP. */
  createdOverHttp: boolean;
  /** The fork's source path, when this stream was forked. */
  forkedFrom?: string;
  forkOffset?: string;
  forkSubOffset?: number;
  /** Live forks of this stream: while any exists, DELETE only marks it gone. */
  forkRefs: number;
  /** Deleted while forks still referenced it: 410 to everything until the last fork goes. */
  gone: boolean;
}

/** A write's producer headers. */
export interface ProducerTuple {
  id: string;
  epoch: number;
  seq: number;
}

/** What the producer table says about a write, before anything changes (Kafka-style fencing). */
export type ProducerCheck =
  | { status: "accepted"; epoch: number; seq: number }
  | { status: "duplicate"; lastSeq: number }
  | { status: "stale-epoch"; currentEpoch: number }
  | { status: "invalid-epoch-seq" }
  | { status: "sequence-gap"; expectedSeq: number; receivedSeq: number };

/**
 * Checks a producer write against the producer's stored state, changing nothing. A new producer
 * starts at seq 0; a higher epoch fences older ones and restarts at 0; within an epoch a seq at or
 * below the last is a duplicate, the next one is accepted, anything further is a gap.
 */
export function checkProducer(stored: { epoch: number; lastSeq: number } | undefined, write: ProducerTuple): ProducerCheck {
  if (!stored) return write.seq === 0 ? { status: "accepted", epoch: write.epoch, seq: 0 } : { status: "sequence-gap", expectedSeq: 0, receivedSeq: write.seq };
  if (write.epoch < stored.epoch) return { status: "stale-epoch", currentEpoch: stored.epoch };
  if (write.epoch > stored.epoch) return write.seq === 0 ? { status: "accepted", epoch: write.epoch, seq: 0 } : { status: "invalid-epoch-seq" };
  if (write.seq <= stored.lastSeq) return { status: "duplicate", lastSeq: stored.lastSeq };
  if (write.seq === stored.lastSeq + 1) return { status: "accepted", epoch: write.epoch, seq: write.seq };
  return { status: "sequence-gap", expectedSeq: stored.lastSeq + 1, receivedSeq: write.seq };
}

/** Whether a stream with `meta` has expired at `now` (Stream-Expires-At, or TTL sliding from the last access). */
export function isExpired(meta: ProtocolMeta, now: number): boolean {
  if (meta.expiresAt !== undefined) {
    const at = Date.parse(meta.expiresAt);
    if (!Number.isFinite(at) || now >= at) return true;
  }
  return meta.ttlSeconds !== undefined && now >= meta.lastAccess + meta.ttlSeconds * 1000;
}

/** The protocol tables of one Stream Durable Object. */
export class ProtocolTables {
  readonly #sql: SqlStorage;
  #meta: ProtocolMeta | undefined;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS http_meta(id INTEGER PRIMARY KEY CHECK (id = 1), value TEXT NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS http_producers(id TEXT PRIMARY KEY, epoch INTEGER NOT NULL, last_seq INTEGER NOT NULL, updated_at INTEGER NOT NULL)");
    const row = sql.exec<{ value: string }>("SELECT value FROM http_meta WHERE id = 1").toArray()[0];
    this.#meta = row ? (JSON.parse(row.value) as ProtocolMeta) : undefined;
  }

  get meta(): ProtocolMeta | undefined {
    return this.#meta;
  }

  saveMeta(meta: ProtocolMeta): void {
    this.#sql.exec(
      "INSERT INTO http_meta(id, value) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET value = excluded.value",
      JSON.stringify(meta),
    );
    this.#meta = meta;
  }

  /** Slides the TTL window; kept in memory, written with the next change (a read must not cost a write). */
  touch(now: number): void {
    if (this.#meta) this.#meta.lastAccess = now;
  }

  producer(id: string): { epoch: number; lastSeq: number } | undefined {
    const row = this.#sql.exec<{ epoch: number; last_seq: number }>("SELECT epoch, last_seq FROM http_producers WHERE id = ?", id).toArray()[0];
    return row ? { epoch: row.epoch, lastSeq: row.last_seq } : undefined;
  }

  saveProducer(id: string, epoch: number, seq: number, now: number): void {
    this.#sql.exec(
      "INSERT INTO http_producers(id, epoch, last_seq, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET epoch = excluded.epoch, last_seq = excluded.last_seq, updated_at = excluded.updated_at",
      id,
      epoch,
      seq,
      now,
    );
    const count = this.#sql.exec<{ n: number }>("SELECT count(*) AS n FROM http_producers").one().n;
    if (count > LIMITS.STREAMS_HTTP_PRODUCERS_MAX) {
      this.#sql.exec("DELETE FROM http_producers WHERE id IN (SELECT id FROM http_producers ORDER BY updated_at LIMIT ?)", count - LIMITS.STREAMS_HTTP_PRODUCERS_MAX);
    }
  }

  /** Forgets everything (the stream was deleted or expired). */
  clear(): void {
    this.#sql.exec("DELETE FROM http_meta");
    this.#sql.exec("DELETE FROM http_producers");
    this.#meta = undefined;
  }
}
