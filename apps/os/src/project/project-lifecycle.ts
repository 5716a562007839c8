import { ItxError } from "iterate/errors";
import { SUBSCRIPTION_CONFIGURED } from "../stream/stream-core.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { claimProject, mintProjectId, type ProjectRecord } from "./project-directory.ts";
import { PROJECT_CREATE_FAILED, PROJECT_CREATE_REQUESTED, PROJECT_CREATED } from "./project-events.ts";

export { PROJECT_CREATE_REQUESTED, PROJECT_CREATED } from "./project-events.ts";

/** The binding whose Durable Objects host Project processors, one per project root `<projectId>:/`. */
export const PROJECT_HOST_BINDING = "PROJECT";

/** How long `create()` waits for the terminal creation fact by default. */
export const PROJECT_CREATE_WAIT_MS = 30_000;

export interface CreateOptions {
  /** Wait for `project/created` (default) or answer once the request is recorded. */
  waitUntilCreated?: boolean;
}

/** Creates a project: claims slug and id in the directory, then requests its creation. */
export async function createProject(env: Env, slug: string, principal: string, createdBy?: string, options: CreateOptions = {}): Promise<ProjectRecord> {
  const record: ProjectRecord = { projectId: mintProjectId(), slug, ...(createdBy === undefined ? {} : { createdBy }) };
  await claimProject(env, record, principal);
  await requestCreation(env, record, principal, options);
  return record;
}

/**
 * Records the creation request on the project's root stream: the Project processor's subscription,
 * then `project/create-requested` with the directory record. Both are keyed, so repeating it (a
 * retried `create()`, or repairing a project whose slug was claimed and nothing else) lands nothing
 * new. The Project processor does the rest; by default this waits for its terminal fact.
 */
export async function requestCreation(env: Env, record: ProjectRecord, principal: string, options: CreateOptions = {}): Promise<void> {
  const root = streamStub(env.STREAM, `${record.projectId}:/`);
  // One commit: the subscription is in place by the time the request it must deliver is stored.
  const [, requested] = await root.append({
    events: [
      {
        type: SUBSCRIPTION_CONFIGURED,
        payload: { key: "project", subscription: { type: "processor", binding: PROJECT_HOST_BINDING, host: `${record.projectId}:/`, processor: "project" } },
        idempotencyKey: "itx/subscription-configured:project",
      },
      { type: PROJECT_CREATE_REQUESTED, payload: record, idempotencyKey: "project/create-requested" },
    ],
    stamp: { principal, origin: "/", platform: "project" },
  });
  if (options.waitUntilCreated === false || !requested) return;
  const terminal = await root.waitForEvent({
    types: [PROJECT_CREATED, PROJECT_CREATE_FAILED],
    payload: { requestOffset: requested.offset },
    afterOffset: requested.offset,
    timeoutMs: PROJECT_CREATE_WAIT_MS,
  });
  if (terminal.type === PROJECT_CREATE_FAILED) {
    const error = (terminal.payload as { error?: string }).error ?? "unknown";
    throw new ItxError("UNAVAILABLE", `project ${record.slug} was not created: ${error}`, { details: { reason: "create-failed" } });
  }
}
