import { errorCode, errorMessage } from "iterate/errors";
import { StreamProcessor, stepKey, type BackgroundContext, type EmittedInput, type ProcessEventArgs, type ReduceArgs } from "iterate/stream/processor";
import { logLimited } from "../logging/log-limiter.ts";
import { needsUpdate, ProjectContract, reduceProject, type ProjectState } from "./project-contract.ts";
import {
  PROJECT_CONFIG_REPO_SEEDED,
  PROJECT_CREATE_ATTEMPT_STARTED,
  PROJECT_CREATE_FAILED,
  PROJECT_CREATED,
  PROJECT_WORKER_EVENT_DELIVERED,
  PROJECT_WORKER_FEED_INSTALLED,
  PROJECT_WORKER_PROBED,
  PROJECT_WORKER_UPDATE_FAILED,
  PROJECT_WORKER_UPDATED,
  WORKER_FEED_TYPES,
} from "./project-events.ts";

type Contract = typeof ProjectContract;
type Record = NonNullable<ProjectState["record"]>;

/** Attempts a creation may start before it fails as unavailable; each is counted in a fact. */
export const PROJECT_CREATE_ATTEMPTS_MAX = 3;
/** Tries the worker's `processEvent` gets for one lifecycle event before the feed moves on. */
export const PROJECT_FEED_ATTEMPTS_MAX = 3;
/** Longest wait between retries of a step that failed for a transient reason. */
export const TRANSIENT_RETRY_MAX_MS = 5_000;

/** What the Project processor does to the world; each effect accepts its own earlier success. */
export interface ProjectEffects {
  /** The root context's birth and its host subscription (get-or-create). */
  ensureRootContext(record: Record, principal: string): Promise<void>;
  /** `/repos/config` exists and its default branch holds a commit: the template's, unless one is there already. */
  seedConfigRepo(record: Record, principal: string): Promise<{ commit: string }>;
  /** Builds the config repo at `commit` (or its head), loads it and probes it. Deterministic failure: INVALID_ARGUMENT. */
  buildAndProbe(at: { commit: string } | { head: true }, state: ProjectState): Promise<{ commit: string; hash: string }>;
  /**
   * Hands the lifecycle event at `offset` of the root stream to the project worker's
   * `processEvent`; rejects when the worker threw. `state` is the newest fold: `project/created` is
   * delivered before the `project/worker-updated` of the same commit is folded.
   */
  deliver(offset: number, state: () => ProjectState): Promise<void>;
  sleep(ms: number): Promise<void>;
}

/**
 * The Project processor. Creation is a run opened by `project/create-requested`: each attempt lands
 * a keyed fact per step and ends in `project/created` (with the worker feed and the first
 * `project/worker-updated` in the same commit) or `project/create-failed`. After creation, each
 * commit to `/repos/config` copied onto the root is built and probed into `project/worker-updated`
 * or `project/worker-update-failed`; lifecycle events after the feed's start go to the worker.
 */
export class ProjectProcessor extends StreamProcessor<Contract> {
  readonly contract = ProjectContract;
  readonly #effects: ProjectEffects;
  /** The config head (its copy's offset) an update found the worker already built from, in this incarnation. */
  #builtAt: number | undefined;

  constructor(effects: ProjectEffects) {
    super();
    this.#effects = effects;
  }

  override reduce({ event, state }: ReduceArgs<Contract>) {
    return reduceProject(state, event);
  }

  override async processEvent({ event, state, runInBackground, delivery }: ProcessEventArgs<Contract>) {
    // Each queued lifecycle event has one driver, keyed by its offset: started when the event is
    // folded, and again at head for any whose driver died with its incarnation (at least once).
    if (event !== null && WORKER_FEED_TYPES.includes(event.type) && state.feedQueue.includes(event.offset)) {
      const offset = event.offset;
      await runInBackground(`project/feed:${offset}`, (context) => this.#feed(offset, context));
    }
    if (!delivery.caughtUp) return;
    for (const offset of state.feedQueue) await runInBackground(`project/feed:${offset}`, (context) => this.#feed(offset, context));
    const creation = state.creation;
    if (creation !== null && (creation.status === "requested" || creation.status === "running")) {
      await runInBackground(`project/create:${creation.requestOffset}`, (context) => this.#create(context));
    }
    if (needsUpdate(state) && this.#builtAt !== state.configHead?.offset) await runInBackground("project/worker-update", (context) => this.#update(context));
  }

  /**
   * Delivers one lifecycle event, retrying a worker that throws (PROJECT_FEED_ATTEMPTS_MAX tries in
   * all), then takes it off the queue with `project/worker-event-delivered`. A host that dies
   * first leaves it queued, and the next incarnation delivers it again: the worker may see an
   * event twice, and can use its offset as the idempotency key.
   */
  async #feed(offset: number, { state, append }: BackgroundContext<Contract>): Promise<void> {
    if (!state().feedQueue.includes(offset)) return;
    let attempts = 0;
    let error: string | undefined;
    for (;;) {
      attempts += 1;
      try {
        await this.#effects.deliver(offset, state);
        error = undefined;
        break;
      } catch (failure) {
        error = errorMessage(failure).slice(0, 2_000);
        if (attempts >= PROJECT_FEED_ATTEMPTS_MAX) break;
        await this.#effects.sleep(1_000 * 2 ** (attempts - 1));
      }
    }
    // Anyone in the project can append the events the worker is fed: the line passes the limiter.
    if (error !== undefined) logLimited("project: the worker's processEvent failed", { offset, attempts, error });
    try {
      await append({
        type: PROJECT_WORKER_EVENT_DELIVERED,
        payload: { offset, attempts, ...(error === undefined ? {} : { error }) },
        idempotencyKey: `project/worker-event-delivered:${offset}`,
      });
    } catch (failure) {
      // An earlier incarnation settled it (with other counts): its fact stands.
      if (errorCode(failure) !== "IDEMPOTENCY_CONFLICT") throw failure;
    }
  }

  /** One attempt of the creation run, decided from the newest state when the driver starts. */
  async #create({ state, append }: BackgroundContext<Contract>): Promise<void> {
    const creation = state().creation;
    const record = state().record;
    if (creation === null || record === null || (creation.status !== "requested" && creation.status !== "running")) return;
    const { requestOffset } = creation;
    if (creation.attempt >= PROJECT_CREATE_ATTEMPTS_MAX) {
      await append(failed(requestOffset, `${PROJECT_CREATE_ATTEMPTS_MAX} attempts ended before the project was created`));
      return;
    }
    const attempt = creation.attempt + 1;
    const key = (type: string) => stepKey("project", type.slice(type.lastIndexOf("/") + 1), requestOffset, attempt);
    const principal = state().principal;
    await append({ type: PROJECT_CREATE_ATTEMPT_STARTED, payload: { requestOffset, attempt }, idempotencyKey: key(PROJECT_CREATE_ATTEMPT_STARTED) });
    try {
      // The root context and the config repo are independent: both are written at once.
      const [, { commit }] = await settledAll([
        this.#transient(() => this.#effects.ensureRootContext(record, principal)),
        this.#transient(() => this.#effects.seedConfigRepo(record, principal)),
      ]);
      await append({ type: PROJECT_CONFIG_REPO_SEEDED, payload: { requestOffset, attempt, commit }, idempotencyKey: key(PROJECT_CONFIG_REPO_SEEDED) });
      const probed = await this.#transient(() => this.#effects.buildAndProbe({ commit }, state()));
      // One commit for the probe's fact and the terminal ones: a host that dies before it probes
      // again (the artifact is stored by then), and the feed starts after the request, so
      // project/created is the worker's first event.
      await append(
        { type: PROJECT_WORKER_PROBED, payload: { requestOffset, attempt, ...probed }, idempotencyKey: key(PROJECT_WORKER_PROBED) },
        { type: PROJECT_WORKER_FEED_INSTALLED, payload: { requestOffset, attempt, afterOffset: requestOffset }, idempotencyKey: `project/worker-feed-installed:${requestOffset}` },
        { type: PROJECT_CREATED, payload: { requestOffset, ...record }, idempotencyKey: "project/created" },
        { type: PROJECT_WORKER_UPDATED, payload: probed, idempotencyKey: `project/worker-updated:seed:${requestOffset}` },
      );
    } catch (error) {
      // Only deterministic failures get here (#transient retries the rest): repeating would fail the same way.
      await append(failed(requestOffset, errorMessage(error)));
    }
  }

  /** Certifies the config repo's head: its worker built and answering, or the reason it is not. */
  async #update({ state, append }: BackgroundContext<Contract>): Promise<void> {
    const before = state();
    const head = before.configHead;
    if (head === null || !needsUpdate(before)) return;
    try {
      const probed = await this.#transient(() => this.#effects.buildAndProbe({ head: true }, before));
      if (probed.commit === before.worker?.commit) {
        // The worker already runs the repository's head (built from it by an earlier update, before
        // this head's copy landed): nothing to write, and nothing to build again for this head.
        this.#builtAt = head.offset;
        return;
      }
      await append({ type: PROJECT_WORKER_UPDATED, payload: { ...probed, configOffset: head.offset }, idempotencyKey: `project/worker-updated:${probed.commit}:${head.offset}` });
    } catch (error) {
      await append({
        type: PROJECT_WORKER_UPDATE_FAILED,
        payload: { commit: head.commit, error: errorMessage(error).slice(0, 4_000) },
        idempotencyKey: `project/worker-update-failed:${head.commit}:${head.offset}`,
      });
    }
  }

  // A transient failure (anything but INVALID_ARGUMENT) leaves the run open: the step runs again
  // after a wait, for as long as this incarnation lives; a new incarnation's driver takes over after.
  async #transient<T>(work: () => Promise<T>): Promise<T> {
    for (let wait = 100; ; wait = Math.min(TRANSIENT_RETRY_MAX_MS, wait * 2)) {
      try {
        return await work();
      } catch (error) {
        if (errorCode(error) === "INVALID_ARGUMENT") throw error;
        logLimited("project: a step failed for a transient reason, retrying", { wait, error: errorMessage(error) });
        await this.#effects.sleep(wait);
      }
    }
  }
}

/** Waits for every step (none is left running behind a failure), then answers or throws the first failure. */
async function settledAll<T extends readonly unknown[]>(steps: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(steps);
  for (const outcome of settled) if (outcome.status === "rejected") throw outcome.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

function failed(requestOffset: number, error: string): EmittedInput<Contract> {
  return { type: PROJECT_CREATE_FAILED, payload: { requestOffset, error: error.slice(0, 4_000) }, idempotencyKey: `project/create-failed:${requestOffset}` };
}
