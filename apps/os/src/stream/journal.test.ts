import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import { unpackEvents } from "iterate/client";
import type { StreamEvent } from "iterate/types";
import { Journal, JOURNAL_EVENTS_VIEW, type PendingEvent } from "./journal.ts";
import { JOURNAL_NAMES_CACHED_MAX } from "./journal-names.ts";
import { LIMITS } from "../limits.ts";

let counter = 0;
/** Runs `body` against the SQLite storage of a fresh Durable Object. */
async function withStorage<T>(body: (storage: DurableObjectStorage) => T): Promise<T> {
  counter += 1;
  const stub = env.STREAM.getByName(`prj_journal${Date.now()}${counter}:/journal`);
  return runInDurableObject(stub, (_instance, state) => body(state.storage));
}

const alice = { principal: "alice", origin: "/" };
const bob = { principal: "bob", origin: "/bob" };
const event = (type: string, n: number, source = alice, idempotencyKey?: string): PendingEvent => ({
  type,
  payload: { n },
  source,
  ...(idempotencyKey ? { idempotencyKey } : {}),
});
const count = (sql: SqlStorage, table: string) => sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table}`).one().n;

describe("Journal", () => {
  test("gives back each commit time exactly as Date#toISOString wrote it", async () => {
    const times = ["1999-12-31T23:59:59.999Z", "2026-12-01T02:27:32.005Z", "2026-12-01T02:27:32.050Z", "2038-01-19T03:14:08.000Z"];
    const { read, packed } = await withStorage((storage) => {
      const journal = new Journal(storage.sql, () => "/journal");
      for (const [i, time] of times.entries()) journal.write([event("demo/at", i)], time);
      return { read: journal.read(0, Number.MAX_SAFE_INTEGER, 10), packed: unpackEvents(journal.readPacked(0, Number.MAX_SAFE_INTEGER, 10)) };
    });
    expect(read.map((e) => e.createdAt)).toEqual(times);
    expect(packed).toEqual(read);
  });

  test("stores each type and source once, however many rows name them", async () => {
    const { types, sources, read } = await withStorage((storage) => {
      const journal = new Journal(storage.sql, () => "/journal");
      const at = new Date().toISOString();
      journal.write([event("demo/a", 1), event("demo/a", 2), event("demo/b", 3)], at);
      journal.write([event("demo/a", 4, bob), event("demo/b", 5, bob, "key-5")], at);
      return { types: count(storage.sql, "journal_types"), sources: count(storage.sql, "journal_sources"), read: journal.read(0, 100, 100) };
    });
    expect(types).toBe(2);
    expect(sources).toBe(2);
    expect(read.map((e) => [e.offset, e.type, e.source.principal, e.idempotencyKey])).toEqual([
      [1, "demo/a", "alice", undefined],
      [2, "demo/a", "alice", undefined],
      [3, "demo/b", "alice", undefined],
      [4, "demo/a", "bob", undefined],
      [5, "demo/b", "bob", "key-5"],
    ]);
  });

  test("a batch of one type and source sends only its payloads, and stores them as a mixed batch would", async () => {
    const payloads: unknown[] = [{ quote: 'say "hi"', back: "a\\b", nl: "x\ny" }, "plain text", 42, 1.5e-7, null, true, [1, [2, [3]]], { é: "ü€😀", nested: { deep: { deeper: [] } } }, {}];
    const uniform = payloads.map((payload): PendingEvent => ({ type: "demo/u", payload, source: alice }));
    const { raw, view, fresh, head } = await withStorage((storage) => {
      const journal = new Journal(storage.sql, () => "/journal");
      const at = "2026-12-01T10:00:00.000Z";
      journal.write([event("demo/first", 0)], at);
      journal.write(uniform, at);
      // Not uniform (a key, then another source): the general statement, numbered on from the uniform rows.
      journal.write([event("demo/u", 1, alice, "k-1"), event("demo/u", 2, bob)], at);
      return {
        raw: storage.sql.exec<{ offset: number; payload: string }>("SELECT offset, payload FROM journal ORDER BY offset").toArray(),
        view: storage.sql.exec<{ type: string; source: string; idempotency_key: string | null }>(`SELECT type, source, idempotency_key FROM ${JOURNAL_EVENTS_VIEW} ORDER BY offset`).toArray(),
        fresh: new Journal(storage.sql, () => "/journal").read(0, 100, 100),
        head: journal.head,
      };
    });
    expect(head).toBe(payloads.length + 3);
    expect(raw.map((row) => row.offset)).toEqual(Array.from({ length: payloads.length + 3 }, (_, i) => i + 1));
    // Each payload is kept as the text JSON.stringify gave it, whichever statement wrote it.
    expect(raw.slice(1, -2).map((row) => row.payload)).toEqual(payloads.map((payload) => JSON.stringify(payload)));
    expect(view.slice(1, -2).every((row) => row.type === "demo/u" && JSON.parse(row.source).principal === "alice" && row.idempotency_key === null)).toBe(true);
    expect(view.slice(-2).map((row) => [JSON.parse(row.source).principal, row.idempotency_key])).toEqual([["alice", "k-1"], ["bob", null]]);
    expect(fresh.slice(1, -2).map((e) => e.payload)).toEqual(payloads);
  });

  test("an unfiltered read (unpacked from the packed page) answers exactly what the JSON page does", async () => {
    const reacting = { principal: "carol", origin: "/c", reaction: { began: "x:1", round: 2 } };
    const { packed, json, again, oddBounds } = await withStorage((storage) => {
      const journal = new Journal(storage.sql, () => "/journal");
      journal.write([event("demo/a", 1), event("demo/b", 2, bob, "k-2"), event("demo/a", 3, reacting), event("demo/a", 4, reacting)], "2026-12-01T10:00:00.001Z");
      journal.write([{ type: "demo/c", payload: ["x", { y: null }], source: alice }, { type: "demo/c", payload: "text", source: alice }], "2026-12-01T10:00:01.999Z");
      // A new Journal holds no recent rows: both answers come from SQLite.
      const fresh = new Journal(storage.sql, () => "/journal");
      const bounds = [[-5, 100, 3], [1.5, 100, 3], [0, 100, -1]].map(([after, before, limit]) => [fresh.read(after as number, before as number, limit as number), JSON.parse(fresh.readJson(after as number, before as number, limit as number))]);
      return { packed: fresh.read(0, 100, 100), json: JSON.parse(fresh.readJson(0, 100, 100)) as StreamEvent[], again: fresh.read(1, 4, 2), oddBounds: bounds };
    });
    expect(packed).toHaveLength(6);
    expect(packed).toEqual(json);
    expect(again.map((e) => e.offset)).toEqual([2, 3]);
    // Events of one page share no object, their sources' reactions included.
    expect(packed[2]?.source.reaction).toEqual(packed[3]?.source.reaction);
    expect(packed[2]?.source.reaction).not.toBe(packed[3]?.source.reaction);
    // Bounds that are not whole numbers take the JSON page, which numbers rows from the rows themselves.
    for (const [read, page] of oddBounds) expect(read).toEqual(page);
  });

  test("an unfiltered read answers what the JSON page does for every bound (random commits: runs, keys, shared commit times, a clear()), and no two events share an object", async () => {
    const mismatches = await withStorage((storage) => {
      let seed = 99;
      const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
      const pick = <T,>(items: T[]): T => items[Math.floor(random() * items.length)] as T;
      const reacting = { principal: "carol", origin: "/c", reaction: { began: "x:1", round: 2 } };
      const sources = [alice, bob, reacting];
      const journal = new Journal(storage.sql, () => "/journal");
      const found: string[] = [];
      let keyCounter = 0;
      const check = () => {
        const fresh = new Journal(storage.sql, () => "/journal");
        const head = fresh.head;
        for (let after = 0; after <= head + 2; after++) {
          for (const before of [after - 1, after, after + 1, after + 2, after + 5, head, head + 1, Number.MAX_SAFE_INTEGER]) {
            for (const limit of [0, 1, 2, 3, 7, 1000]) {
              const read = fresh.read(after, before, limit);
              const json = JSON.parse(fresh.readJson(after, before, limit)) as StreamEvent[];
              if (JSON.stringify(read) !== JSON.stringify(json)) found.push(`${head} ${after} ${before} ${limit}: ${JSON.stringify(read)} vs ${JSON.stringify(json)}`);
              const objects = new Set<unknown>();
              for (const e of read) {
                for (const o of [e.payload, e.source, e.source.reaction]) {
                  if (typeof o === "object" && o !== null) {
                    if (objects.has(o)) found.push(`shared object at ${after} ${before} ${limit}`);
                    objects.add(o);
                  }
                }
              }
            }
          }
        }
      };
      const times = ["2026-12-01T10:00:00.001Z", "2026-12-01T10:00:00.002Z", "2026-12-01T10:00:01.000Z"];
      for (let round = 0; round < 3; round++) {
        for (let commit = 0; commit < 8; commit++) {
          const n = 1 + Math.floor(random() * 4);
          const source = pick(sources);
          const events = Array.from({ length: n }, (_, i): PendingEvent => ({
            type: pick(["demo/a", "demo/a", "demo/b", "demo/c"]),
            payload: pick([{ i }, [i, { x: null }], "text", 0, null, {}]),
            source: random() < 0.8 ? source : pick(sources),
            ...(random() < 0.2 ? { idempotencyKey: `k-${keyCounter++}` } : {}),
          }));
          journal.write(events, pick(times));
        }
        check();
        if (round === 1) journal.clear();
      }
      return found;
    });
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  test("filters by type, and finds an event by its idempotency key", async () => {
    const { filtered, byKey, missing } = await withStorage((storage) => {
      const journal = new Journal(storage.sql, () => "/journal");
      journal.write([event("demo/a", 1), event("demo/b", 2, alice, "k"), event("demo/c", 3)], new Date().toISOString());
      return { filtered: journal.read(0, 100, 100, ["demo/b", "demo/c", "demo/never"]), byKey: journal.byIdempotencyKey("k"), missing: journal.byIdempotencyKey("nope") };
    });
    expect(filtered.map((e) => e.type)).toEqual(["demo/b", "demo/c"]);
    expect(byKey?.offset).toBe(2);
    expect(byKey?.payload).toEqual({ n: 2 });
    expect(missing).toBeUndefined();
  });

  test("forgets ids a rolled-back transaction made, so the next write names its type again", async () => {
    const read = await withStorage((storage) => {
      const journal = new Journal(storage.sql, () => "/journal");
      const at = new Date().toISOString();
      journal.write([event("demo/kept", 1)], at);
      try {
        storage.transactionSync(() => {
          journal.write([event("demo/rolled-back", 2, bob)], at);
          throw new Error("abort the transaction");
        });
      } catch {
        journal.reset();
      }
      journal.write([event("demo/rolled-back", 2, bob)], at);
      return journal.read(0, 100, 100);
    });
    expect(read.map((e) => [e.offset, e.type, e.source.principal])).toEqual([
      [1, "demo/kept", "alice"],
      [2, "demo/rolled-back", "bob"],
    ]);
  });

  test(`keeps naming sources right past its cache of ${JOURNAL_NAMES_CACHED_MAX}`, async () => {
    const total = JOURNAL_NAMES_CACHED_MAX + 50;
    const read = await withStorage((storage) => {
      const journal = new Journal(storage.sql, () => "/journal");
      const at = new Date().toISOString();
      for (let i = 0; i < total; i++) journal.write([event("demo/many", i, { principal: `p${i % (total - 7)}`, origin: "/" })], at);
      return journal.read(0, Number.MAX_SAFE_INTEGER, total);
    });
    expect(read).toHaveLength(total);
    for (const [i, e] of read.entries()) expect(e.source.principal).toBe(`p${i % (total - 7)}`);
  });

  test("moves a stream written in the old layout into its tables once, and drops the old table", async () => {
    const legacy = [
      { offset: 1, type: "demo/a", payload: '{"n":1}', created_at: "2025-06-01T10:00:00.123Z", source: JSON.stringify(alice), idempotency_key: null },
      { offset: 2, type: "demo/b", payload: '{"n":2}', created_at: "2025-06-01T10:00:00.123Z", source: JSON.stringify(alice), idempotency_key: "k2" },
      { offset: 3, type: "demo/a", payload: '{"deep":{"x":[1,2]}}', created_at: "2025-06-02T00:00:01.009Z", source: JSON.stringify(bob), idempotency_key: null },
    ];
    const result = await withStorage((storage) => {
      storage.sql.exec("DELETE FROM journal");
      storage.sql.exec(`CREATE TABLE events(offset INTEGER PRIMARY KEY, type TEXT NOT NULL, payload TEXT NOT NULL, created_at TEXT NOT NULL, source TEXT NOT NULL, idempotency_key TEXT UNIQUE)`);
      for (const row of legacy) {
        storage.sql.exec("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", row.offset, row.type, row.payload, row.created_at, row.source, row.idempotency_key);
      }
      const journal = new Journal(storage.sql, () => "/journal");
      const head = journal.head;
      const oldTable = storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'events'").toArray().length;
      const next = journal.write([event("demo/a", 4)], "2026-01-01T00:00:00.000Z");
      const again = new Journal(storage.sql, () => "/journal");
      return { head, oldTable, next: next[0]?.offset, read: again.read(0, 100, 100), view: storage.sql.exec(`SELECT * FROM ${JOURNAL_EVENTS_VIEW} ORDER BY offset`).toArray() };
    });
    expect(result.head).toBe(3);
    expect(result.oldTable).toBe(0);
    expect(result.next).toBe(4);
    expect(result.read.slice(0, 3)).toEqual(
      legacy.map((row) => ({
        streamPath: "/journal",
        offset: row.offset,
        type: row.type,
        payload: JSON.parse(row.payload) as unknown,
        createdAt: row.created_at,
        source: JSON.parse(row.source) as unknown,
        ...(row.idempotency_key ? { idempotencyKey: row.idempotency_key } : {}),
      })),
    );
    expect(result.view.slice(0, 3)).toEqual(legacy);
  });

  test("answers a read right behind the head from memory, exactly as SQLite would, and falls back past what memory holds", async () => {
    const result = await withStorage((storage) => {
      const journal = new Journal(storage.sql, () => "/journal");
      const at = "2026-12-01T08:00:00.123Z";
      const odd = { type: "demo/odd", payload: { zero: -0, text: "é\u2028", nested: [{ a: null }], "1": 1 }, source: bob, idempotencyKey: "odd" };
      journal.write([event("demo/a", 1), odd, event("demo/b", 3, alice)], at);
      const fromMemory = journal.read(0, Number.MAX_SAFE_INTEGER, 10);
      const again = journal.read(1, 3, 10);
      const none = journal.read(1, 2, 10);
      const fromSql = JSON.parse(journal.readJson(0, Number.MAX_SAFE_INTEGER, 10)) as unknown[];
      // Past the bound on rows: the oldest are read from SQLite again, the newest still from memory.
      journal.write(Array.from({ length: LIMITS.JOURNAL_RECENT_MAX_EVENTS + 5 }, (_, i) => event("demo/many", i)), at);
      const head = journal.head;
      const oldest = journal.read(0, 6, 5);
      // An undone write leaves nothing behind in memory: the next read does not see it.
      try {
        storage.transactionSync(() => {
          journal.write([event("demo/undone", 0)], at);
          throw new Error("abort the transaction");
        });
      } catch {
        journal.reset();
      }
      const afterRollback = journal.read(head - 1, Number.MAX_SAFE_INTEGER, 10);
      journal.write([event("demo/after", 0)], at);
      // Rows gone from under the journal show where each read came from: memory still has the
      // newest, SQLite has nothing.
      storage.sql.exec("DELETE FROM journal");
      const newestFromMemory = journal.read(head, Number.MAX_SAFE_INTEGER, 10);
      const olderFromSql = journal.read(head - LIMITS.JOURNAL_RECENT_MAX_EVENTS - 2, head - LIMITS.JOURNAL_RECENT_MAX_EVENTS + 1, 10);
      return { fromMemory, again, none, fromSql, oldest, newestFromMemory, olderFromSql, afterRollback, head };
    });
    expect(result.fromMemory).toEqual(result.fromSql);
    expect(Object.is(((result.fromMemory[1] as StreamEvent).payload as { zero: number }).zero, 0)).toBe(true);
    expect(result.fromMemory.map((e) => Object.keys(e))).toEqual((result.fromSql as object[]).map((e) => Object.keys(e)));
    expect(result.fromMemory.map((e) => Object.keys(e.payload as object))).toEqual((result.fromSql as StreamEvent[]).map((e) => Object.keys(e.payload as object)));
    expect(result.again.map((e) => e.offset)).toEqual([2]);
    expect(result.none).toEqual([]);
    expect(result.oldest.map((e) => e.offset)).toEqual([1, 2, 3, 4, 5]);
    expect(result.afterRollback.map((e) => [e.offset, e.type])).toEqual([[result.head, "demo/many"]]);
    // Memory starts again after the rollback: the one write since is there, older rows are not.
    expect(result.newestFromMemory.map((e) => [e.offset, e.type])).toEqual([[result.head + 1, "demo/after"]]);
    expect(result.olderFromSql).toEqual([]);
  });

  test("answers a read that names types from memory exactly as SQLite does, and one at or past the head with nothing", async () => {
    const { mismatches, atHead } = await withStorage((storage) => {
      const journal = new Journal(storage.sql, () => "/journal");
      const at = "2026-12-01T08:00:00.123Z";
      const types = ["demo/a", "demo/b", "demo/c"];
      for (let i = 0; i < 40; i++) journal.write([event(types[i % 3] as string, i, i % 2 ? alice : bob, i % 7 === 0 ? `k${i}` : undefined)], at);
      const fresh = new Journal(storage.sql, () => "/journal");
      const found: string[] = [];
      for (const wanted of [["demo/a"], ["demo/b", "demo/c"], ["demo/never"], ["demo/c", "demo/a", "demo/b"]]) {
        for (let after = 0; after <= 42; after += 3) {
          for (const before of [after + 1, after + 4, 41, Number.MAX_SAFE_INTEGER]) {
            for (const limit of [0, 1, 2, 5, 500]) {
              const memory = journal.read(after, before, limit, wanted);
              const sql = fresh.read(after, before, limit, wanted);
              if (JSON.stringify(memory) !== JSON.stringify(sql)) found.push(`${wanted} ${after} ${before} ${limit}`);
            }
          }
        }
      }
      // Rows gone from under the journal: a read at or past the head still answers nothing, and
      // asks SQLite nothing either.
      storage.sql.exec("DELETE FROM journal");
      return { mismatches: found, atHead: [journal.read(40, Number.MAX_SAFE_INTEGER, 10), journal.read(41, Number.MAX_SAFE_INTEGER, 10, ["demo/a"])] };
    });
    expect(mismatches).toEqual([]);
    expect(atHead).toEqual([[], []]);
  });

  test(`keeps at most JOURNAL_RECENT_MAX_CHARS (${LIMITS.JOURNAL_RECENT_MAX_CHARS}) characters of payload in memory`, async () => {
    const result = await withStorage((storage) => {
      const journal = new Journal(storage.sql, () => "/journal");
      const at = new Date().toISOString();
      const big = "x".repeat(200_000);
      for (let i = 0; i < 8; i++) journal.write([{ type: "demo/big", payload: { i, big }, source: alice }], at);
      storage.sql.exec("DELETE FROM journal");
      // Five payloads of ~200,000 characters fit under the limit, the sixth would not.
      return [1, 2, 3, 4, 5, 6].map((back) => journal.read(8 - back, Number.MAX_SAFE_INTEGER, 1).length);
    });
    const fit = Math.floor(LIMITS.JOURNAL_RECENT_MAX_CHARS / 200_020);
    expect(result).toEqual([1, 2, 3, 4, 5, 6].map((back) => (back <= fit ? 1 : 0)));
  });

  test("a page holds at most maxBytes of stored payload past its first event, in every format and from memory, and pages read on from their last offset cover the stream", async () => {
    const maxBytes = 600;
    const result = await withStorage((storage) => {
      const journal = new Journal(storage.sql, () => "/journal");
      // Payloads of 10 to ~1,400 bytes, some past maxBytes alone, some of two-byte characters.
      const pads = ["", "x".repeat(40), "x".repeat(120), "é".repeat(150), "x".repeat(700), "y", "é".repeat(260), "x".repeat(290)];
      const written: StreamEvent[] = [];
      for (let commit = 0; commit < 6; commit++) {
        const events = Array.from({ length: 5 }, (_, i): PendingEvent => ({ type: i % 2 ? "demo/b" : "demo/a", payload: { pad: pads[(commit * 5 + i) % pads.length] }, source: commit % 2 ? alice : bob }));
        written.push(...journal.write(events, `2026-12-01T10:00:0${commit}.000Z`));
      }
      const fresh = new Journal(storage.sql, () => "/journal");
      const max = Number.MAX_SAFE_INTEGER;
      const readers: Record<string, (after: number, limit: number) => StreamEvent[]> = {
        memory: (after, limit) => journal.read(after, max, limit, undefined, maxBytes),
        packed3: (after, limit) => fresh.read(after, max, limit, undefined, maxBytes),
        json: (after, limit) => JSON.parse(fresh.readJson(after, max, limit, undefined, maxBytes)) as StreamEvent[],
        packed1: (after, limit) => unpackEvents(fresh.readPacked(after, max, limit, maxBytes)),
        packed2: (after, limit) => unpackEvents(fresh.readPacked2(after, max, limit, maxBytes)),
        typed: (after, limit) => fresh.read(after, max, limit, ["demo/a", "demo/b"], maxBytes),
        typedFromMemory: (after, limit) => journal.read(after, max, limit, ["demo/b", "demo/a"], maxBytes),
      };
      const stored = written.map((e) => ({ offset: e.offset, type: e.type, bytes: new TextEncoder().encode(JSON.stringify(e.payload)).length }));
      // The page a byte bound allows: rows in order while their running sum fits, and the first always.
      const expected = (after: number, limit: number, types?: string[]) => {
        const page: number[] = [];
        let bytes = 0;
        for (const row of stored) {
          if (row.offset <= after || (types && !types.includes(row.type)) || page.length >= limit) continue;
          bytes += row.bytes;
          if (page.length > 0 && bytes > maxBytes) break;
          page.push(row.offset);
        }
        return page;
      };
      const mismatches: string[] = [];
      for (let after = 0; after < journal.head; after++) {
        for (const limit of [1, 3, 1000]) {
          for (const [name, read] of Object.entries(readers)) {
            const got = read(after, limit).map((e) => e.offset);
            if (JSON.stringify(got) !== JSON.stringify(expected(after, limit))) mismatches.push(`${name} ${after} ${limit}: ${JSON.stringify(got)}`);
          }
          const onlyA = fresh.read(after, max, limit, ["demo/a"], maxBytes).map((e) => e.offset);
          if (JSON.stringify(onlyA) !== JSON.stringify(expected(after, limit, ["demo/a"]))) mismatches.push(`demo/a ${after} ${limit}: ${JSON.stringify(onlyA)}`);
        }
      }
      // Read on from each page's last offset: every event once, in order.
      const seen: number[] = [];
      for (let after = 0; after < fresh.head; ) {
        const page = fresh.read(after, max, 1000, undefined, maxBytes);
        seen.push(...page.map((e) => e.offset));
        after = (page.at(-1) as StreamEvent).offset;
      }
      // The real bound is far above what memory keeps: a read right behind the head is still
      // answered from memory (rows gone from under the journal show it).
      storage.sql.exec("DELETE FROM journal");
      const fromMemory = journal.read(journal.head - 3, max, 10, undefined, LIMITS.READ_PAGE_MAX_BYTES).map((e) => e.offset);
      return { mismatches, seen, head: journal.head, fromMemory, largest: Math.max(...stored.map((row) => row.bytes)) };
    });
    expect(result.largest).toBeGreaterThan(maxBytes);
    expect(result.mismatches.slice(0, 5)).toEqual([]);
    expect(result.seen).toEqual(Array.from({ length: result.head }, (_, i) => i + 1));
    expect(result.fromMemory).toEqual([result.head - 2, result.head - 1, result.head]);
  });

  test("an idempotency key is unique in the table itself; only events that carry one are indexed, in a new journal and in one made before", async () => {
    const result = await withStorage((storage) => {
      const sql = storage.sql;
      const indexes = () => sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'journal' ORDER BY name").toArray().map((row) => row.name);
      const journal = new Journal(sql, () => "/journal");
      const at = new Date().toISOString();
      journal.write([event("demo/a", 1, alice, "k1"), event("demo/a", 2), event("demo/a", 3)], at);
      let duplicate = "";
      try {
        journal.write([event("demo/a", 4, alice, "k1")], at);
      } catch (error) {
        duplicate = String(error);
        journal.reset();
      }
      const fresh = { indexes: indexes(), entries: sql.exec<{ n: number }>("SELECT count(*) AS n FROM journal INDEXED BY journal_idempotency_key WHERE idempotency_key IS NOT NULL").one().n, head: journal.head, duplicate };
      // A journal made before: its key column was UNIQUE. Opening it adds the partial index beside.
      sql.exec("DROP INDEX journal_idempotency_key");
      sql.exec("ALTER TABLE journal RENAME TO journal_new");
      sql.exec("CREATE TABLE journal(offset INTEGER PRIMARY KEY, type_id INTEGER NOT NULL, payload TEXT NOT NULL, at INTEGER NOT NULL, source_id INTEGER NOT NULL, idempotency_key TEXT UNIQUE)");
      sql.exec("INSERT INTO journal SELECT * FROM journal_new");
      sql.exec("DROP TABLE journal_new");
      const reopened = new Journal(sql, () => "/journal");
      reopened.write([event("demo/a", 4, bob, "k2")], at);
      return { fresh, old: { indexes: indexes(), byKey: reopened.byIdempotencyKey("k2")?.offset, head: reopened.head } };
    });
    expect(result.fresh.indexes).toEqual(["journal_idempotency_key"]);
    expect(result.fresh.entries).toBe(1);
    expect(result.fresh.duplicate).toMatch(/UNIQUE constraint failed/);
    expect(result.fresh.head).toBe(3);
    expect(result.old.indexes).toEqual(["journal_idempotency_key", "sqlite_autoindex_journal_1"]);
    expect(result.old).toMatchObject({ byKey: 4, head: 4 });
  });
});
