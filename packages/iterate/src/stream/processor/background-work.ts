import { z } from "zod";
import { ItxError } from "../../errors/index.ts";
import type { BackgroundClaim } from "../../types.ts";
import { claimKey, claimPrefix, type EngineClock, type ProcessorStorage } from "./host.ts";
import type { BackgroundStart } from "./stream-processor.ts";

/** The first wait after a death; each further death doubles it. */
export const BACKGROUND_BACKOFF_BASE_MS = 1_000;

const claimSchema = z.object({
  slug: z.string(),
  key: z.string(),
  attempts: z.number().int().nonnegative(),
  nextAttemptAt: z.number(),
  status: z.enum(["waiting", "running", "given-up"]),
});

/** A background task's failure, reported rather than retried: the work itself decides what a failure means. */
export interface BackgroundErrorReport {
  slug: string;
  key: string;
  error: unknown;
}

export interface BackgroundWorkOptions {
  storage: ProcessorStorage;
  clock: EngineClock;
  /** A claim whose work died this many times is given up. */
  maxDeaths: number;
  onGiveUp(claim: BackgroundClaim): void;
  onError(report: BackgroundErrorReport): void;
  /**
   * Called when work settles, before its key is released: the engine folds what the work appended,
   * so that no later pass mistakes a finished run for one nobody drives.
   */
  afterWork(slug: string): Promise<unknown>;
}

/**
 * The background work of one engine: claims in storage, one live task per (slug, key), and the
 * bookkeeping of deaths. A claim found `running` that no task of this engine holds belonged to a
 * host that died: that is one death, answered with an exponential backoff and, past `maxDeaths`,
 * with giving up.
 */
export class BackgroundWork {
  readonly #options: BackgroundWorkOptions;
  readonly #live = new Map<string, Promise<void>>();
  #stopped = false;

  constructor(options: BackgroundWorkOptions) {
    this.#options = options;
  }

  /**
   * Claims `key` for `slug` and runs `work`, unless it is already live here or was given up.
   * `work` is told which start this is: above 1, every earlier start died with its host.
   */
  start(slug: string, key: string, work: (attempt: number) => Promise<void>): Promise<BackgroundStart> {
    if (this.#stopped) return Promise.reject(stoppedError());
    const id = liveId(slug, key);
    if (this.#live.has(id)) return Promise.resolve("running");
    const answer = Promise.withResolvers<BackgroundStart>();
    let answered = false;
    const resolve = (start: BackgroundStart) => {
      answered = true;
      answer.resolve(start);
    };
    // Registered before the first await, so that a second call in the same tick sees it. The
    // error for work that never answered is made only then: every finished task would otherwise
    // pay for an error and its stack trace on the processor's hot path.
    const task = this.#run(slug, key, work, resolve).then(
      () => {
        if (!answered) answer.reject(new ItxError("INTERNAL", `background work "${key}" ended without answering`));
      },
      (error: unknown) => {
        if (!answered) answer.reject(error);
      },
    );
    this.#live.set(id, task);
    void task.finally(() => this.#live.delete(id));
    return answer.promise;
  }

  async #run(slug: string, key: string, work: (attempt: number) => Promise<void>, answer: (start: BackgroundStart) => void) {
    const { storage, clock } = this.#options;
    let claim = parseClaim(await storage.get(claimKey(slug, key)));
    if (claim?.status === "running") claim = await this.#recordDeath(claim);
    if (claim?.status === "given-up") return answer("given-up");
    const waitMs = claim === undefined ? 0 : Math.max(0, claim.nextAttemptAt - clock.now());
    if (waitMs > 0) {
      answer("scheduled");
      await clock.sleep(waitMs);
      if (this.#stopped) return;
    }
    const attempts = (claim?.attempts ?? 0) + 1;
    await storage.put(claimKey(slug, key), { slug, key, attempts, nextAttemptAt: clock.now(), status: "running" });
    answer("started");
    try {
      await work(attempts);
    } catch (error) {
      this.#options.onError({ slug, key, error });
    }
    // A stopped host leaves its claims behind, exactly as a dead one would.
    if (this.#stopped) return;
    await this.#options.afterWork(slug);
    // The work's facts are on the stream and folded: the claim is bookkeeping now. A crash that
    // loses its delete leaves a claim that revival finds nothing to drive for and releases, so
    // what the host sends next (a turn's next request, say) does not wait for this write.
    if (!this.#stopped) await storage.delete(claimKey(slug, key), { allowUnconfirmed: true });
  }

  /** Counts one death: the claim waits out its backoff, or is given up past the bound. */
  async #recordDeath(claim: BackgroundClaim): Promise<BackgroundClaim> {
    const { storage, clock, maxDeaths } = this.#options;
    const next: BackgroundClaim =
      claim.attempts >= maxDeaths
        ? { ...claim, status: "given-up" }
        : {
            ...claim,
            status: "waiting",
            nextAttemptAt: clock.now() + BACKGROUND_BACKOFF_BASE_MS * 2 ** Math.max(0, claim.attempts - 1),
          };
    await storage.put(claimKey(claim.slug, claim.key), next);
    if (next.status === "given-up") this.#options.onGiveUp(next);
    return next;
  }

  /**
   * Finds the claims of `slug` that no task here holds and counts a death for each that was
   * running. Answers the claims that are now waiting for a driver.
   */
  async revive(slug: string): Promise<{ waiting: BackgroundClaim[]; givenUp: BackgroundClaim[] }> {
    const waiting: BackgroundClaim[] = [];
    const givenUp: BackgroundClaim[] = [];
    for (const claim of await this.claims(slug)) {
      if (this.#live.has(liveId(slug, claim.key)) || claim.status === "given-up") continue;
      const next = claim.status === "running" ? await this.#recordDeath(claim) : claim;
      (next.status === "given-up" ? givenUp : waiting).push(next);
    }
    return { waiting, givenUp };
  }

  /** Drops a claim its processor did not take up again: the work is no longer wanted. */
  async release(claim: BackgroundClaim): Promise<boolean> {
    if (this.#live.has(liveId(claim.slug, claim.key))) return false;
    return this.#options.storage.delete(claimKey(claim.slug, claim.key));
  }

  /** Every stored claim of `slug`, given-up ones included. */
  async claims(slug: string): Promise<BackgroundClaim[]> {
    const entries = await this.#options.storage.list({ prefix: claimPrefix(slug) });
    return [...entries.values()].flatMap((value) => parseClaim(value) ?? []);
  }

  /** True while work under (slug, key) is live in this engine. */
  isLive(slug: string, key: string): boolean {
    return this.#live.has(liveId(slug, key));
  }

  get liveCount(): number {
    return this.#live.size;
  }

  /** Resolves when no work is live, including work started while waiting. */
  async idle(): Promise<void> {
    while (this.#live.size > 0) await Promise.allSettled(this.#live.values());
  }

  /** Stops starting and finishing work; claims stay in storage for the next host. */
  stop(): void {
    this.#stopped = true;
  }
}

function liveId(slug: string, key: string): string {
  return `${slug}\u0000${key}`;
}

function parseClaim(value: unknown): BackgroundClaim | undefined {
  const parsed = claimSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** The error every call into a stopped engine gets. */
export function stoppedError(): ItxError {
  return new ItxError("UNAVAILABLE", "the processor engine was stopped; its host is going away");
}
