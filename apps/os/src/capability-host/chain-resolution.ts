import { pathKey } from "./capability-path.ts";
import { hostStub } from "./host-stub.ts";
import { ResolutionHints, ResolutionWatchers } from "./resolution-hints.ts";

/**
 * How one capability host finds which ancestor answers a path it does not hold, and keeps what it
 * learnt true: it remembers owners (hints) while every ancestor asked watches it, and tells its own
 * watchers to forget when its table gains a mount (see resolution-hints.ts).
 */
export class ChainResolution {
  readonly #env: Env;
  readonly #projectId: string;
  readonly #path: string;
  readonly #hints = new ResolutionHints();
  readonly #watchers: ResolutionWatchers;

  constructor(env: Env, coordinate: { projectId: string; path: string }, storage: DurableObjectStorage) {
    this.#env = env;
    this.#projectId = coordinate.projectId;
    this.#path = coordinate.path;
    this.#watchers = new ResolutionWatchers(storage);
  }

  /** The nearest ancestor holding a prefix of `path` (null: none), from a hint or by asking them all at once. */
  async ownerOf(path: string[], ancestors: string[]): Promise<string | null> {
    const key = pathKey(path);
    const hinted = this.#hints.get(key);
    if (hinted !== undefined) return hinted;
    const generation = this.#hints.generation;
    const answers = await Promise.all(
      ancestors.map((ancestor) => hostStub(this.#env, this.#projectId, ancestor).resolve({ path, watcher: this.#path })),
    );
    let owner: string | null = null;
    for (let index = answers.length - 1; index >= 0; index--) {
      if (answers[index]?.held) {
        owner = ancestors[index] as string;
        break;
      }
    }
    if (answers.every((answer) => answer.watched)) this.#hints.remember(key, owner, generation);
    return owner;
  }

  /** A descendant asked about this table: it is told when the table gains a mount. Answers whether it is watched. */
  watch(watcher: string): Promise<boolean> {
    return this.#watchers.add(watcher);
  }

  /** An ancestor gained a mount: every remembered owner may be stale. */
  forgetAll(): void {
    this.#hints.forgetAll();
  }

  /** This table gained a mount: descendants that remember the chain forget it before the provide answers. */
  async tellWatchers(): Promise<void> {
    const watchers = await this.#watchers.drain();
    if (watchers.length === 0) return;
    const told = await Promise.allSettled(watchers.map((watcher) => hostStub(this.#env, this.#projectId, watcher).forgetHints()));
    const missed = told.flatMap((result, index) => (result.status === "rejected" ? [watchers[index] as string] : []));
    // Not reached now: watch them again so the next mount retries; their hints expire meanwhile.
    for (const watcher of missed) await this.#watchers.add(watcher);
    if (missed.length > 0) console.error(`could not tell ${missed.length} context(s) that ${this.#path} gained a mount`);
  }
}
