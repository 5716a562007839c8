import type { EventSource } from "iterate/types";
import { ItxError } from "iterate/errors";

/**
 * Who may append which event. Most event types are anybody's: any writer in a project may append
 * them to any of its contexts, and every event is stamped with where it came from. Some types are
 * folded by a platform contract as authority (a subscription row makes a host fold the stream, an
 * enqueued run makes the host run a script, a capability row makes calls resolve). Those are the
 * platform's own: the Stream refuses them from every writer whose stamp does not name one of the
 * platform parts listed here. `stamp.platform` is set only by the platform code that holds the
 * Stream stub, never taken from input.
 *
 * The table is the design of record (docs/security.md shows it); `write-authority.test.ts` fails
 * when a platform contract folds a type that has no row here.
 */

/** The parts of the platform that write to streams, as they name themselves in `stamp.platform`. */
export const PLATFORM_WRITERS = {
  /** The Stream Durable Object itself (loop-limit facts, a project root's `stream/woken`). */
  stream: "stream",
  /** Context creation: a subscription to the context's capability host and its birth certificate. */
  context: "context",
  /** A capability host recording its table's changes (provide, revoke, disconnect). */
  capabilityHost: "capability-host",
  /** `itx.run`: the inline run's request and settled facts. */
  run: "run",
  /** An agent's processor host: requests, frames, replies, enqueued scripts, stops. */
  agent: "agent",
  /** The agent surface (`itx.agents`): creation, configuration and the agent's own chat. */
  agents: "agents",
  /** Project creation on the project's root stream. */
  project: "project",
  /** The deployment's project directory (slug and id claims). */
  projectDirectory: "project-directory",
  /** A secret's Durable Object: set and used facts. */
  secret: "secret",
  /** The bearer-token and browser-session registries: issued, revoked, started and ended facts. */
  auth: "auth",
  /** A context's scheduler: schedules set and cancelled, and each occurrence fired or failed. */
  scheduler: "scheduler",
  /** A repository's Durable Object and `itx.repos`: creation, commits, branches, the repo directory. */
  repo: "repo",
  /** `itx.processor` and the hosts of config-repo processors: their subscription rows and halts. */
  processor: "processor",
} as const;

export type PlatformWriter = (typeof PLATFORM_WRITERS)[keyof typeof PLATFORM_WRITERS];

/** A processor host writing through the stream capability its stream woke it with. */
export type ProcessorHostWriter = `processor-host:${string}`;

const E = "events.iterate.com/";

/** A rule: which writers may append a type, and why the type needs one. */
export interface WriteRule {
  writers: ReadonlyArray<PlatformWriter | ProcessorHostWriter>;
  /** What a forged row would do: why it is the platform's. */
  why: string;
}

/** Types that a platform contract folds as authority, and who may write each. */
export const CONTROL_EVENTS: Readonly<Record<string, WriteRule>> = {
  [`${E}itx/subscription-configured`]: {
    writers: ["context", "agents", "project", "processor"],
    why: "makes a processor host fold the stream (and act on what it folds)",
  },
  [`${E}itx/subscription-delivery-halted`]: {
    writers: ["processor"],
    why: "says a config-repo processor stopped folding its stream (a forged one would mislead whoever reads its state)",
  },
  [`${E}itx/created`]: { writers: ["context"], why: "the context's birth certificate: its parent and ancestors decide where calls fall through" },
  [`${E}itx/capability-provided`]: { writers: ["capability-host"], why: "a row of the capability table: calls resolve to it, HTTP may expose it" },
  [`${E}itx/capability-revoked`]: { writers: ["capability-host"], why: "removes a row of the capability table" },
  [`${E}itx/capability-disconnected`]: {
    writers: ["capability-host", "processor-host:core"],
    why: "marks a live row dead",
  },
  [`${E}itx/run-settled`]: {
    writers: ["run", "capability-host", "processor-host:core"],
    why: "closes a run; agents read its result as the script's output",
  },
  [`${E}itx/schedule-set`]: { writers: ["scheduler"], why: "defines a schedule: its script runs on a clock as the stamped writer" },
  [`${E}itx/schedule-cancelled`]: { writers: ["scheduler"], why: "ends a schedule" },
  [`${E}itx/schedule-fired`]: { writers: ["scheduler"], why: "settles an occurrence: the fold moves the schedule's clock past its slot" },
  [`${E}itx/schedule-failed`]: { writers: ["scheduler"], why: "settles an occurrence as failed: the fold moves the schedule's clock past its slot" },
  [`${E}itx/loop-limit`]: { writers: ["stream"], why: "records that a chain of reactions was stopped" },
  [`${E}stream/woken`]: {
    writers: ["stream"],
    why: "a project root's new incarnation: the project worker runs on it, so a forged one would run the worker on demand and fake a restart",
  },
  [`${E}agent/created`]: { writers: ["agents"], why: "makes the agent: its model, key reference and system prompt" },
  [`${E}agent/configured`]: { writers: ["agents"], why: "changes the agent's model or system prompt (validated by configure())" },
  [`${E}agent/llm-request-requested`]: { writers: ["agent"], why: "starts a model request (a turn)" },
  [`${E}agent/llm-request-settled`]: { writers: ["agent"], why: "ends a model request" },
  [`${E}agent/llm-response-frame`]: { writers: ["agent"], why: "the model's streamed words, shown to viewers as the agent's" },
  [`${E}agent/message-sent`]: { writers: ["agents"], why: "the agent's words to people; ask() answers with them" },
  [`${E}agent/loop-stopped`]: { writers: ["agent"], why: "stops the agent's loop" },
  [`${E}agent/listed`]: { writers: ["agents"], why: "a row of the project's agent list" },
  [`${E}project/create-requested`]: { writers: ["project"], why: "a project's creation request" },
  [`${E}project/created`]: { writers: ["processor-host:project"], why: "a project's terminal creation fact: its worker's first lifecycle event" },
  [`${E}project/create-attempt-started`]: { writers: ["processor-host:project"], why: "a step of the creation run" },
  [`${E}project/config-repo-seeded`]: { writers: ["processor-host:project"], why: "a step of the creation run: the seed commit it certifies" },
  [`${E}project/worker-probed`]: { writers: ["processor-host:project"], why: "a step of the creation run: the artifact it certifies" },
  [`${E}project/worker-feed-installed`]: { writers: ["processor-host:project"], why: "decides which lifecycle events reach the project worker" },
  [`${E}project/create-failed`]: { writers: ["processor-host:project"], why: "a project's terminal creation failure" },
  [`${E}project/worker-updated`]: { writers: ["processor-host:project"], why: "makes an artifact the project's worker: ingress and itx.worker run it" },
  [`${E}project/worker-update-failed`]: { writers: ["processor-host:project"], why: "records that a config head is not runnable, so it is not retried" },
  [`${E}project/worker-event-delivered`]: { writers: ["processor-host:project"], why: "takes a lifecycle event off the worker's feed: it is not delivered again" },
  [`${E}project/slug-claimed`]: { writers: ["project-directory"], why: "a row of the project directory" },
  [`${E}project/id-claimed`]: { writers: ["project-directory"], why: "a row of the project directory" },
  [`${E}secret/set`]: { writers: ["secret"], why: "audit of a secret's material and allowlist" },
  [`${E}secret/used`]: { writers: ["secret"], why: "audit of a secret's use" },
  [`${E}repo/created`]: { writers: ["repo"], why: "a repository's birth: processors (the project worker, builds) trust it" },
  [`${E}repo/commit-completed`]: { writers: ["repo"], why: "says a branch moved: workers rebuild and the project worker is re-certified from it" },
  [`${E}repo/branch-created`]: { writers: ["repo"], why: "says a branch exists at a commit" },
  [`${E}repo/branch-deleted`]: { writers: ["repo"], why: "says a branch is gone" },
  [`${E}repo/listed`]: { writers: ["repo"], why: "a row of the project's repository list" },
  [`${E}token/issued`]: { writers: ["auth"], why: "a row of the bearer-token registry" },
  [`${E}token/revoked`]: { writers: ["auth"], why: "revokes a bearer token: its next authenticate fails and its sessions end" },
  [`${E}auth/browser-session-started`]: { writers: ["auth"], why: "a browser session: its cookie authenticates as the principal it names" },
  [`${E}auth/browser-session-ended`]: { writers: ["auth"], why: "signs a browser out: its cookie stops authenticating and its connections end" },
};

/**
 * Types a platform contract folds that any writer may append, each with why folding it from
 * anyone is safe. A type is in exactly one of the two tables.
 */
export const OPEN_EVENTS: Readonly<Record<string, string>> = {
  [`${E}itx/run-requested`]:
    "an enqueued request runs in the context as whoever wrote it (the stamped principal and origin), no more than that writer could run itself; agents act only on their own",
  [`${E}project/heartbeat-triggered`]:
    "the heartbeat's script appends it as whoever set the schedule; it only wakes the project's own worker, which acts as the root whatever woke it",
  [`${E}agent/context-added`]:
    "anyone may speak to an agent: the fold reads the sender from the stamped origin, and keeps assistant words only from the agent itself",
};

/**
 * Namespaces the platform owns: a type under one of them that neither table names (a later
 * domain's event) is the platform's until it gets a row.
 */
export const PLATFORM_NAMESPACES: readonly string[] = ["itx", "agent", "project", "secret", "token", "auth", "repo", "scheduler", "schedule", "stream"].map(
  (namespace) => `${E}${namespace}/`,
);

/** The rule for `type`: its row, the closed default of a platform namespace, or undefined (anyone). */
export function writeRuleOf(type: string): WriteRule | undefined {
  // Own rows only: a type spelled like an Object.prototype member ("constructor") is a client's type.
  if (Object.hasOwn(CONTROL_EVENTS, type)) return CONTROL_EVENTS[type];
  if (Object.hasOwn(OPEN_EVENTS, type)) return undefined;
  if (PLATFORM_NAMESPACES.some((namespace) => type.startsWith(namespace))) {
    return { writers: Object.values(PLATFORM_WRITERS), why: "a type in a namespace the platform owns" };
  }
  return undefined;
}

/** Whether a write stamped `stamp` may append an event of `type`. */
export function mayWrite(type: string, stamp: EventSource): boolean {
  const rule = writeRuleOf(type);
  if (!rule) return true;
  const writer = stamp.platform;
  if (writer === undefined) return false;
  return rule.writers.includes(writer as PlatformWriter | ProcessorHostWriter);
}

/** The refusal an ordinary writer gets for a platform idempotency key. */
export function notYourKey(key: string, index: number): ItxError {
  return new ItxError(
    "PERMISSION_DENIED",
    `event ${index}: idempotency keys starting with ${JSON.stringify(key.slice(0, key.indexOf("/") + 1))} are the platform's; choose another key`,
    { details: { index, reason: "platform-key" } },
  );
}

/** The refusal an ordinary writer gets for a platform type: nothing is written. */
export function notYoursToWrite(type: string, index: number): ItxError {
  const rule = writeRuleOf(type);
  return new ItxError(
    "PERMISSION_DENIED",
    `event ${index}: ${type} is written only by the platform (${rule?.why ?? "a platform type"}); append your own event types instead`,
    { details: { index, type, reason: "platform-event" } },
  );
}

/**
 * Idempotency keys the platform looks facts up by (`itx/created`, `agent/created`,
 * `token/revoked:<id>`, ...) start with a platform namespace. Only platform writers may use them,
 * so nobody can squat a key and make the platform believe a fact exists, or fail its own write.
 */
export const PLATFORM_KEY_PREFIXES: readonly string[] = ["itx/", "agent/", "project/", "secret/", "token/", "auth/", "repo/", "scheduler/", "schedule/"];

/** Whether a write stamped `stamp` may use idempotency key `key`. */
export function mayUseKey(key: string, stamp: EventSource): boolean {
  return stamp.platform !== undefined || !PLATFORM_KEY_PREFIXES.some((prefix) => key.startsWith(prefix));
}

/** Whether this stamp comes from a processor host the platform runs, which alone may label `source.processor`. */
export function processorOfStamp(stamp: EventSource): string | undefined {
  if (stamp.platform === PLATFORM_WRITERS.agent) return "agent";
  if (stamp.platform === PLATFORM_WRITERS.capabilityHost) return "core";
  if (stamp.platform?.startsWith("processor-host:")) return stamp.platform.slice("processor-host:".length);
  return undefined;
}
