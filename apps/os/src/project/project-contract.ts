import { z } from "zod";
import { defineProcessorContract, type ConsumedEvent, type StateOf } from "iterate/stream/processor";
import {
  CONFIG_COMMIT_COPIED,
  PROJECT_CONFIG_REPO_SEEDED,
  PROJECT_CREATE_ATTEMPT_STARTED,
  PROJECT_CREATE_FAILED,
  PROJECT_CREATE_REQUESTED,
  PROJECT_CREATED,
  PROJECT_HEARTBEAT_TRIGGERED,
  PROJECT_WORKER_EVENT_DELIVERED,
  PROJECT_WORKER_FEED_INSTALLED,
  PROJECT_WORKER_PROBED,
  PROJECT_WORKER_UPDATE_FAILED,
  PROJECT_WORKER_UPDATED,
  STREAM_WOKEN,
  WORKER_FEED_TYPES,
} from "./project-events.ts";

const recordSchema = z.object({ projectId: z.string(), slug: z.string(), createdBy: z.string().optional() });
const step = z.strictObject({ requestOffset: z.number().int().positive(), attempt: z.number().int().positive() });
const commitId = z.string().regex(/^[0-9a-f]{40}$/);

/** The facts the Project processor writes: each step of a creation run, and each worker build. */
const PROJECT_EMITS = [
  PROJECT_CREATE_ATTEMPT_STARTED,
  PROJECT_CONFIG_REPO_SEEDED,
  PROJECT_WORKER_PROBED,
  PROJECT_WORKER_FEED_INSTALLED,
  PROJECT_CREATED,
  PROJECT_CREATE_FAILED,
  PROJECT_WORKER_UPDATED,
  PROJECT_WORKER_UPDATE_FAILED,
  PROJECT_WORKER_EVENT_DELIVERED,
] as const;

/** Where the project stands: its creation run, the worker that serves, and the config head it has not certified yet. */
export const ProjectContract = defineProcessorContract({
  slug: "project",
  version: "1.0.0",
  description: "Creates the project in steps, then keeps its worker built from the head of /repos/config and feeds it the lifecycle events.",
  stateSchema: z.object({
    record: recordSchema.nullable().default(null),
    /** Who asked for the project: its worker acts as this principal. */
    principal: z.string().default("platform"),
    creation: z
      .object({
        requestOffset: z.number().int().positive(),
        attempt: z.number().int().nonnegative(),
        lastStep: z.string(),
        status: z.enum(["requested", "running", "created", "failed"]),
        error: z.string().optional(),
      })
      .nullable()
      .default(null),
    /** The certified worker: the commit it was built from and its artifact. */
    worker: z.object({ commit: z.string(), hash: z.string(), offset: z.number().int(), configOffset: z.number().int().optional() }).nullable().default(null),
    /** Lifecycle events after this offset go to the worker. */
    feedAfterOffset: z.number().int().nullable().default(null),
    /** Offsets of lifecycle events not yet delivered to the worker, oldest first (at most FEED_QUEUE_MAX). */
    feedQueue: z.array(z.number().int()).default([]),
    /** The newest commit to /repos/config's default branch seen after creation. */
    configHead: z.object({ commit: z.string(), offset: z.number().int() }).nullable().default(null),
    /** The last head that failed, so that it is not rebuilt until the head moves. */
    failedCommit: z.string().nullable().default(null),
  }),
  events: {
    [PROJECT_CREATE_REQUESTED]: recordSchema,
    [PROJECT_CREATE_ATTEMPT_STARTED]: step,
    [PROJECT_CONFIG_REPO_SEEDED]: step.extend({ commit: commitId }),
    [PROJECT_WORKER_PROBED]: step.extend({ commit: commitId, hash: z.string() }),
    [PROJECT_WORKER_FEED_INSTALLED]: step.extend({ afterOffset: z.number().int().nonnegative() }),
    // Loose: projects created before creation was a run recorded { ...record, requestOffset }.
    [PROJECT_CREATED]: z.object({ requestOffset: z.number().int().positive() }).loose(),
    [PROJECT_CREATE_FAILED]: z.strictObject({ requestOffset: z.number().int().positive(), error: z.string() }),
    // `configOffset`: the offset of the config head the update was started for (absent on the seed's).
    [PROJECT_WORKER_UPDATED]: z.strictObject({ commit: commitId, hash: z.string(), configOffset: z.number().int().nonnegative().optional() }),
    [PROJECT_WORKER_UPDATE_FAILED]: z.strictObject({ commit: commitId, error: z.string() }),
    [PROJECT_HEARTBEAT_TRIGGERED]: z.object({ scheduleKey: z.string() }).loose(),
    [STREAM_WOKEN]: z.object({ incarnation: z.string(), previousHead: z.number().int().nonnegative() }).loose(),
    [PROJECT_WORKER_EVENT_DELIVERED]: z.strictObject({ offset: z.number().int().positive(), attempts: z.number().int().positive(), error: z.string().optional() }),
    [CONFIG_COMMIT_COPIED]: z.object({ branch: z.string(), commit: commitId, repo: z.string().optional() }).loose(),
  },
  // It folds every fact it writes, plus the request that starts a run and the outside events that
  // reach or move the worker (a heartbeat, the root stream's woken, a commit to the config repo).
  consumes: [PROJECT_CREATE_REQUESTED, ...PROJECT_EMITS, PROJECT_HEARTBEAT_TRIGGERED, STREAM_WOKEN, CONFIG_COMMIT_COPIED],
  emits: PROJECT_EMITS,
});

export type ProjectState = StateOf<typeof ProjectContract>;
export type ProjectEvent = ConsumedEvent<typeof ProjectContract>;

/** The config repository's path. */
export const CONFIG_REPO = "/repos/config";

/** The default branch of /repos/config: its commits are the ones that become the worker. */
export const CONFIG_BRANCH = "main";

/**
 * Lifecycle events waiting for the worker that the state remembers. The feed is at least once
 * for these; past them (a flood of heartbeats, which anyone may append) the oldest are dropped.
 */
export const FEED_QUEUE_MAX = 32;

/** The Project processor's pure fold: its facts, then the worker feed's queue. */
export function reduceProject(state: ProjectState, event: ProjectEvent): ProjectState {
  const next = reduceFacts(state, event);
  if (event.type === PROJECT_WORKER_EVENT_DELIVERED) return { ...next, feedQueue: next.feedQueue.filter((offset) => offset !== event.payload.offset) };
  if (!WORKER_FEED_TYPES.includes(event.type) || next.feedAfterOffset === null || event.offset <= next.feedAfterOffset) return next;
  return { ...next, feedQueue: [...next.feedQueue, event.offset].slice(-FEED_QUEUE_MAX) };
}

function reduceFacts(state: ProjectState, event: ProjectEvent): ProjectState {
  const creation = state.creation;
  // The open run, when this event is one of its facts.
  const run = (payload: { requestOffset: number }) =>
    creation !== null && (creation.status === "requested" || creation.status === "running") && payload.requestOffset === creation.requestOffset ? creation : null;
  switch (event.type) {
    case PROJECT_CREATE_REQUESTED: {
      if (creation !== null) return state;
      const principal = event.source?.principal ?? state.principal;
      return { ...state, record: event.payload, principal, creation: { requestOffset: event.offset, attempt: 0, lastStep: "create-requested", status: "requested" } };
    }
    case PROJECT_CREATE_ATTEMPT_STARTED: {
      const open = run(event.payload);
      if (open === null || event.payload.attempt <= open.attempt) return state;
      return { ...state, creation: { ...open, attempt: event.payload.attempt, lastStep: "create-attempt-started", status: "running" } };
    }
    case PROJECT_CONFIG_REPO_SEEDED:
    case PROJECT_WORKER_PROBED: {
      const open = run(event.payload);
      if (open === null || event.payload.attempt !== open.attempt) return state;
      return { ...state, creation: { ...open, lastStep: event.type.slice(event.type.lastIndexOf("/") + 1) } };
    }
    case PROJECT_WORKER_FEED_INSTALLED:
      return run(event.payload) === null ? state : { ...state, feedAfterOffset: event.payload.afterOffset };
    case PROJECT_CREATED: {
      const open = run(event.payload);
      return open === null ? state : { ...state, creation: { ...open, lastStep: "created", status: "created" } };
    }
    case PROJECT_CREATE_FAILED: {
      const open = run(event.payload);
      return open === null ? state : { ...state, creation: { ...open, lastStep: "create-failed", status: "failed", error: event.payload.error } };
    }
    case PROJECT_WORKER_UPDATED:
      return {
        ...state,
        worker: {
          commit: event.payload.commit,
          hash: event.payload.hash,
          offset: event.offset,
          ...(event.payload.configOffset === undefined ? {} : { configOffset: event.payload.configOffset }),
        },
        failedCommit: null,
      };
    case PROJECT_WORKER_UPDATE_FAILED:
      return { ...state, failedCommit: event.payload.commit };
    case CONFIG_COMMIT_COPIED:
      if (event.payload.branch !== CONFIG_BRANCH || event.payload.repo !== CONFIG_REPO) return state;
      return { ...state, configHead: { commit: event.payload.commit, offset: event.offset } };
    default:
      return state;
  }
}

/**
 * True when the certified worker is behind the newest config commit, and that commit has not
 * already failed. An update builds the repository's head as it finds it, which may be newer than
 * the head it was started for: it covers the heads copied up to its start (`configOffset`), not
 * one copied while it built (that one is built next).
 */
export function needsUpdate(state: ProjectState): boolean {
  if (state.creation?.status !== "created" || state.configHead === null) return false;
  if (state.worker !== null && (state.worker.configOffset ?? state.worker.offset) >= state.configHead.offset) return false;
  return state.worker?.commit !== state.configHead.commit && state.failedCommit !== state.configHead.commit;
}
