import { LIMITS } from "../limits.ts";
// A call that misses a context's own table goes to the nearest ancestor holding a prefix of its
// path. Finding that ancestor means asking every ancestor, so a context remembers the answer per
// path (a hint) and asks again only when one of those ancestors may have changed its answer.
//
// Only a new mount on an ancestor can make a hint wrong: a revoke (or a disconnect) on the hinted
// owner is seen by the owner itself, which then delegates further up; an ancestor nearer than the
// owner had nothing at that path when the hint was made, and a later mount there invalidates it.
// So every ancestor that answered keeps the asking context as a watcher and, when it gains a
// mount, tells each watcher to forget its hints before the provide returns. Watchers are stored in
// the ancestor's storage, so an ancestor that restarts still tells them.


interface Hint {
  /** The nearest ancestor holding a prefix of the path, or null when none does. */
  owner: string | null;
  madeAt: number;
}

/** The hints one context keeps: path key -> owning ancestor. */
export class ResolutionHints {
  readonly #hints = new Map<string, Hint>();
  #generation = 0;

  /** The remembered owner of `key` (null: nobody), or undefined when it must be asked. */
  get(key: string, now = Date.now()): string | null | undefined {
    const hint = this.#hints.get(key);
    if (!hint) return undefined;
    if (now - hint.madeAt > LIMITS.RESOLUTION_HINT_TTL_MS) {
      this.#hints.delete(key);
      return undefined;
    }
    return hint.owner;
  }

  /** Taken before asking the ancestors; `remember` drops an answer that a `forgetAll` overtook. */
  get generation(): number {
    return this.#generation;
  }

  remember(key: string, owner: string | null, generation: number, now = Date.now()): void {
    if (generation !== this.#generation) return;
    this.#hints.delete(key);
    this.#hints.set(key, { owner, madeAt: now });
    if (this.#hints.size > LIMITS.RESOLUTION_HINTS_MAX) this.#hints.delete(this.#hints.keys().next().value as string);
  }

  forgetAll(): void {
    this.#generation += 1;
    this.#hints.clear();
  }

  get size(): number {
    return this.#hints.size;
  }
}

const WATCHER_PREFIX = "resolution-watcher:";

/** The contexts that keep hints naming this one's table, stored beside the table. */
export class ResolutionWatchers {
  readonly #storage: DurableObjectStorage;
  #watchers: Set<string> | undefined;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /** Watches `path` for the caller. Answers false when full (the caller then keeps no hint). */
  async add(path: string): Promise<boolean> {
    const watchers = await this.#load();
    if (watchers.has(path)) return true;
    if (watchers.size >= LIMITS.RESOLUTION_WATCHERS_MAX) return false;
    watchers.add(path);
    await this.#storage.put(WATCHER_PREFIX + path, 1);
    return true;
  }

  /** Takes every watcher out (they register again with their next question). */
  async drain(): Promise<string[]> {
    const watchers = await this.#load();
    if (watchers.size === 0) return [];
    const drained = [...watchers];
    watchers.clear();
    // The storage API deletes at most 128 keys per call.
    for (let start = 0; start < drained.length; start += 128) {
      await this.#storage.delete(drained.slice(start, start + 128).map((path) => WATCHER_PREFIX + path));
    }
    return drained;
  }

  async #load(): Promise<Set<string>> {
    if (!this.#watchers) {
      const stored = await this.#storage.list({ prefix: WATCHER_PREFIX });
      this.#watchers ??= new Set([...stored.keys()].map((key) => key.slice(WATCHER_PREFIX.length)));
    }
    return this.#watchers;
  }
}
