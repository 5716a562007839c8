import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";

/**
 * The floor under every platform call that goes through a Durable Object: a no-op, one insert,
 * and a tight insert loop. Reachable only through /api/bench when ITERATE_BENCH is "1".
 */
export class BenchDurableObject extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS rows(id INTEGER PRIMARY KEY AUTOINCREMENT, payload TEXT NOT NULL)");
  }

  noop(): null {
    return null;
  }

  insertOne(payload: string): number {
    this.ctx.storage.sql.exec("INSERT INTO rows(payload) VALUES (?)", payload);
    return 1;
  }

  /** Inserts `count` rows inside this one request; the caller times the whole call. */
  insertMany(count: number): number {
    const sql = this.ctx.storage.sql;
    for (let i = 0; i < count; i++) sql.exec("INSERT INTO rows(payload) VALUES (?)", `row-${i}`);
    return count;
  }
}
