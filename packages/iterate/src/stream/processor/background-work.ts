import { z } from "zod";
import { ItxError } from "../../errors/index.ts";
import type { BackgroundClaim } from "../../types.ts";
import { claimKey, claimPrefix, type EngineClock, type ProcessorStorage } from "./host.ts";
import type { BackgroundStart } from "./stream-processor.ts";

/** The first wait after a death; each further death doubles it. */
export const BACKGROUND_BACKOFF_BASE_MS = 1_000;

/** Longest a settled claim waits for the engine's next write to be deleted with it. */
export const SETTLED_CLAIM_DELETE_WAIT_MS = 1_000;

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
  /**
   * Called as a claim is written running, in the same turn as its write (so a host's alarm set
   * here shares the claim's commit): a host arms what revives the work should it die.
   */
  onClaim?(claim: BackgroundClaim): void;
}

/**
 * The background work of one engine: claims in storage, one live task per (slug, key), and the
 * bookkeeping of deaths. A claim found `running` that no task of this engine holds belonged to a
 * host that died: that is one death, answered with an exponential backoff and, past `maxDeaths`,
 * with giving up.
 *
 * When work settles, its claim is deleted with the engine's next write (a checkpoint: see
 * `deleteSettled`), or after SETTLED_CLAIM_DELETE_WAIT_MS when none comes: a write of its own would
 * be one more commit, and a Durable Object's commits hold its thread. Until then this engine knows
 * the claim is done (it is neither listed nor revived); a host that dies first leaves a claim that
 * revival finds nothing to drive for and releases.
 */
export class BackgroundWork {
  readonly #options: BackgroundWorkOptions;
  readonly #live = new Map<string, Promise<void>>();
  /** Claims of settled work not deleted yet, by live id. */
  readonly #settled = new Map<string, { slug: string; key: string }>();
  #deleteScheduled = false;
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
    // A claim of this key's own settled work is no dead host's: the new start overwrites it.
    const settledHere = this.#settled.delete(liveId(slug, key));
    let claim = settledHere ? undefined : parseClaim(await storage.get(claimKey(slug, key)));
    if (claim?.status === "running") claim = await this.#recordDeath(claim);
    if (claim?.status === "given-up") return answer("given-up");
    const waitMs = claim === undefined ? 0 : Math.max(0, claim.nextAttemptAt - clock.now());
    if (waitMs > 0) {
      answer("scheduled");
      await clock.sleep(waitMs);
      if (this.#stopped) return;
    }
    const attempts = (claim?.attempts ?? 0) + 1;
    const running: BackgroundClaim = { slug, key, attempts, nextAttemptAt: clock.now(), status: "running" };
    const written = storage.put(claimKey(slug, key), running);
    this.#options.onClaim?.(running);
    await written;
    answer("started");
    try {
      await work(attempts);
    } catch (error) {
      this.#options.onError({ slug, key, error });
    }
    // A stopped host leaves its claims behind, exactly as a dead one would.
    if (this.#stopped) return;
    await this.#options.afterWork(slug);
    // The work's facts are on the stream and folded: the claim is bookkeeping now.
    if (this.#stopped) return;
    this.#settled.set(liveId(slug, key), { slug, key });
    this.#scheduleDelete();
  }

  /**
   * Deletes the claims of settled work. The engine calls it beside each checkpoint write, so the
   * deletes share that write's commit. A delete lost in a crash is harmless (see the class
   * comment), so what the host sends next need not wait for it either.
   */
  async deleteSettled(): Promise<void> {
    for (const [id, { slug, key }] of this.#settled) {
      this.#settled.delete(id);
      await this.#options.storage.delete(claimKey(slug, key), { allowUnconfirmed: true });
    }
  }

  // Real time, not the engine's clock: this is bookkeeping, not a wait the processor's logic sees.
  #scheduleDelete(): void {
    if (this.#deleteScheduled) return;
    this.#deleteScheduled = true;
    setTimeout(() => {
      this.#deleteScheduled = false;
      if (!this.#stopped) void this.deleteSettled().catch(() => undefined);
    }, SETTLED_CLAIM_DELETE_WAIT_MS);
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

  /** Every stored claim of `slug`, given-up ones included, but those of work settled here. */
  async claims(slug: string): Promise<BackgroundClaim[]> {
    const entries = await this.#options.storage.list({ prefix: claimPrefix(slug) });
    return [...entries.values()].flatMap((value) => parseClaim(value) ?? []).filter((claim) => !this.#settled.has(liveId(slug, claim.key)));
  }

  /** True while work under (slug, key) is live in this engine. */
  isLive(slug: string, key: string): boolean {
    return this.#live.has(liveId(slug, key));
  }

  get liveCount(): number {
    return this.#live.size;
  }

  /** Resolves when no work is live, including work started while waiting, and settled claims are deleted. */
  async idle(): Promise<void> {
    while (this.#live.size > 0) await Promise.allSettled(this.#live.values());
    if (!this.#stopped) await this.deleteSettled();
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
