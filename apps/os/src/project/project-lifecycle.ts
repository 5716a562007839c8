import { ensureContext } from "../itx/context-lifecycle.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { claimProject, mintProjectId, type ProjectRecord } from "./project-directory.ts";

export const PROJECT_CREATE_REQUESTED = "events.iterate.com/project/create-requested";
export const PROJECT_CREATED = "events.iterate.com/project/created";

/**
 * Creates a project: claims slug and id in the directory, then records the creation on the
 * project's root stream: `project/create-requested`, the root context's birth (its host
 * subscription and `itx/created`), and `project/created` naming the request's offset. Each
 * append is keyed, so a retried creation lands once.
 */
export async function createProject(env: Env, slug: string, principal: string, createdBy?: string): Promise<ProjectRecord> {
  const record: ProjectRecord = { projectId: mintProjectId(), slug, ...(createdBy === undefined ? {} : { createdBy }) };
  await claimProject(env, record, principal);
  const root = streamStub(env.STREAM, `${record.projectId}:/`);
  const stamp = { principal, origin: "/", platform: "project" };
  const [requested] = await root.append({
    events: [{ type: PROJECT_CREATE_REQUESTED, payload: record, idempotencyKey: "project/create-requested" }],
    stamp,
  });
  await ensureContext(env, { projectId: record.projectId, path: "/", name: slug, parent: null, ancestors: [], caller: { principal, origin: "/" } });
  await root.append({
    events: [{ type: PROJECT_CREATED, payload: { ...record, requestOffset: requested?.offset ?? 1 }, idempotencyKey: "project/created" }],
    stamp,
  });
  return record;
}
