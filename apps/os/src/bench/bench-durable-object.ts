import { DurableObject } from "cloudflare:workers";
import { ProcessorEngine, type ProcessorStorage } from "iterate/stream/processor";
import { Journal } from "../stream/journal.ts";
import { ReplayProcessor } from "./replay-processor.ts";

/**
 * The floor under every platform call that goes through a Durable Object: a no-op, one insert,
 * and a tight insert loop. Bound and exported only by the
 * bench worker (bench-worker.ts), reachable only through its /api/bench.
 */
export class BenchDurableObject extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS rows(id INTEGER PRIMARY KEY AUTOINCREMENT, payload TEXT NOT NULL)");
  }

  #callback: ((value: number) => unknown) | undefined;

  /** Keeps another session's callback (dup: parameters are released when this call returns). */
  keepCallback(callback: ((value: number) => unknown) & { dup?: () => (value: number) => unknown }): void {
    this.#callback = callback.dup ? callback.dup() : callback;
  }

  async callKeptCallback(value: number): Promise<unknown> {
    if (!this.#callback) throw new Error("no callback kept");
    return this.#callback(value);
  }

  noop(): null {
    return null;
  }

  insertOne(payload: string): number {
    this.ctx.storage.sql.exec("INSERT INTO rows(payload) VALUES (?)", payload);
    return 1;
  }

  /** Fills this object's own stream journal with `count` small events (500 per statement, as appends do). */
  fillJournal(count: number): number {
    const journal = new Journal(this.ctx.storage.sql, () => "/bench/replay");
    const createdAt = new Date().toISOString();
    for (let i = 0; i < count; i += 500) {
      const batch = Array.from({ length: Math.min(500, count - i) }, (_, j) => ({
        type: "bench/tick",
        payload: { i: i + j, t: "evt", v: "xxxxxxxx" },
        source: { principal: "bench" },
      }));
      journal.write(batch, createdAt);
    }
    return journal.head;
  }

  /**
   * Replays the journal from offset 0 into a fresh processor, through the real engine (batches,
   * schema checks, one checkpoint per batch). The caller times the call.
   */
  async replayJournal(): Promise<{ offset: number; count: number }> {
    const journal = new Journal(this.ctx.storage.sql, () => "/bench/replay");
    const slug = `bench-replay`;
    await this.ctx.storage.delete([`processor/${slug}/checkpoint`, `processor/${slug}/born`]);
    const engine = new ProcessorEngine({
      stream: {
        read: async ({ afterOffset, limit }) => journal.read(afterOffset, Number.MAX_SAFE_INTEGER, limit),
        head: async () => journal.head,
        append: async () => {
          throw new Error("the replay benchmark appends nothing");
        },
      },
      storage: this.ctx.storage as unknown as ProcessorStorage,
      processors: [new ReplayProcessor()],
    });
    await engine.catchUp();
    const snapshot = await engine.snapshot(slug);
    return { offset: snapshot.offset, count: (snapshot.state as { count: number }).count };
  }

  /** Inserts `count` rows inside this one request; the caller times the whole call. */
  insertMany(count: number): number {
    const sql = this.ctx.storage.sql;
    for (let i = 0; i < count; i++) sql.exec("INSERT INTO rows(payload) VALUES (?)", `row-${i}`);
    return count;
  }
}
