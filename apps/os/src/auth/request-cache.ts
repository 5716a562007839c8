import { LIMITS } from "../limits.ts";

/**
 * How long a /streams request's authentication (and its project's directory record) is reused by
 * the Worker isolate that checked it. Every request authenticates; without this each costs two
 * registry reads and a directory read before the stream is touched. The price: a token revoked
 * now still works on /streams for at most this long on an isolate that saw it succeed.
 */
export const STREAMS_HTTP_AUTH_CACHE_MS = 1_000;

/** A small per-isolate cache of successful lookups, at most STREAMS_HTTP_AUTH_CACHE_ENTRIES, each kept STREAMS_HTTP_AUTH_CACHE_MS. */
export class ShortCache<V> {
  readonly #entries = new Map<string, { value: V; until: number }>();

  async get(key: string, load: () => Promise<V>, now = Date.now()): Promise<V> {
    const hit = this.#entries.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = await load();
    if (this.#entries.size >= LIMITS.STREAMS_HTTP_AUTH_CACHE_ENTRIES) {
      for (const [k, entry] of this.#entries) if (entry.until <= now) this.#entries.delete(k);
      if (this.#entries.size >= LIMITS.STREAMS_HTTP_AUTH_CACHE_ENTRIES) this.#entries.clear();
    }
    // Only successes are kept (a failed load threw): a refused credential is checked every time.
    if (value !== undefined) this.#entries.set(key, { value, until: now + STREAMS_HTTP_AUTH_CACHE_MS });
    return value;
  }
}
