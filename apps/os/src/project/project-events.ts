import { STREAM_WOKEN } from "../stream/stream-woken.ts";

export { STREAM_WOKEN } from "../stream/stream-woken.ts";

/**
 * The project domain's facts, on the project's root stream. `create-requested` is appended by
 * `projects.create` (platform writer "project"); every other fact but the heartbeat is the
 * Project processor's (writer "processor-host:project"). See docs/projects.md.
 */

/** Opens the creation run; its offset is the run's id. Payload: the directory record. */
export const PROJECT_CREATE_REQUESTED = "events.iterate.com/project/create-requested";
/** One attempt of the creation run started. */
export const PROJECT_CREATE_ATTEMPT_STARTED = "events.iterate.com/project/create-attempt-started";
/** The root context exists and `/repos/config` holds the template at `commit`. */
export const PROJECT_CONFIG_REPO_SEEDED = "events.iterate.com/project/config-repo-seeded";
/** The seed worker built (artifact `hash`), loaded and answered its readiness probe. */
export const PROJECT_WORKER_PROBED = "events.iterate.com/project/worker-probed";
/** The project's lifecycle events after `afterOffset` now reach the project worker. */
export const PROJECT_WORKER_FEED_INSTALLED = "events.iterate.com/project/worker-feed-installed";
/** Terminal: the project exists and its worker runs. */
export const PROJECT_CREATED = "events.iterate.com/project/created";
/** Terminal: creation failed for a reason repeating it would not change (the seed does not build). */
export const PROJECT_CREATE_FAILED = "events.iterate.com/project/create-failed";
/** The worker at `commit` of `/repos/config` is the one that serves. */
export const PROJECT_WORKER_UPDATED = "events.iterate.com/project/worker-updated";
/** The head `commit` of `/repos/config` did not build or answer; the previous worker keeps serving. */
export const PROJECT_WORKER_UPDATE_FAILED = "events.iterate.com/project/worker-update-failed";
/** The heartbeat schedule fired (appended by the schedule's script as whoever set it). */
export const PROJECT_HEARTBEAT_TRIGGERED = "events.iterate.com/project/heartbeat-triggered";

/**
 * The worker's `processEvent` settled for the lifecycle event at `offset` (after `attempts` tries;
 * `error` when the last one threw): the event leaves the feed's queue. Delivery is at least once.
 */
export const PROJECT_WORKER_EVENT_DELIVERED = "events.iterate.com/project/worker-event-delivered";

/**
 * The lifecycle events the project worker's `processEvent` receives. `stream/woken` is the root
 * stream's own (writer "stream"): a new incarnation of it, once the project has a worker.
 */
export const WORKER_FEED_TYPES: readonly string[] = [PROJECT_CREATED, PROJECT_WORKER_UPDATED, PROJECT_HEARTBEAT_TRIGGERED, STREAM_WOKEN];

/** The config repo's facts, copied onto the root stream by the repo (repo/repo-durable-object.ts). */
export const CONFIG_COMMIT_COPIED = "events.iterate.com/repo/commit-completed";
