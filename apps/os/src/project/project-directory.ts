import type { StreamEvent } from "iterate/types";
import { ItxError, errorCode } from "iterate/errors";
import { coordinateName, DEPLOYMENT_PROJECT_ID } from "../stream/coordinate.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { LIMITS } from "../limits.ts";

/** The deployment-wide stream whose facts are the project directory (slug and id claims). */
export const DIRECTORY_STREAM = coordinateName({ projectId: DEPLOYMENT_PROJECT_ID, path: "/projects" });
export const PROJECT_SLUG_CLAIMED = "events.iterate.com/project/slug-claimed";
export const PROJECT_ID_CLAIMED = "events.iterate.com/project/id-claimed";

/** A slug: 2-63 characters, lowercase kebab-case, starting with a letter (so never a `prj_` id). */
const SLUG = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

export interface ProjectRecord {
  projectId: string;
  slug: string;
  /**
   * The principal (not an admin) who created the project: membership is this fact, so the creator
   * reaches the project from any later session, whatever its credential listed.
   */
  createdBy?: string;
}

export function parseProjectSlug(slug: unknown): string {
  if (typeof slug !== "string" || slug.length < 2 || slug.length > LIMITS.PROJECT_SLUG_MAX_LENGTH || !SLUG.test(slug)) {
    throw new ItxError(
      "INVALID_ARGUMENT",
      `a project slug is 2-${LIMITS.PROJECT_SLUG_MAX_LENGTH} characters of lowercase letters, digits and single hyphens, starting with a letter; got ${JSON.stringify(String(slug).slice(0, 80))}`,
    );
  }
  return slug;
}

/** A fresh project id: `prj_` and 20 random base-32 characters. */
export function mintProjectId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  return `prj_${Array.from(bytes, (byte) => alphabet[byte % 32]).join("")}`;
}

/**
 * Claims a slug and an id together in one commit. Idempotency keys make both unique: a slug
 * already claimed for another id fails, and repeating the same claim answers the stored one.
 */
export async function claimProject(env: Env, record: ProjectRecord, principal: string): Promise<void> {
  try {
    await directory(env).append({
      events: [
        { type: PROJECT_SLUG_CLAIMED, payload: record, idempotencyKey: `project/slug-claimed:${record.slug}` },
        { type: PROJECT_ID_CLAIMED, payload: record, idempotencyKey: `project/id-claimed:${record.projectId}` },
      ],
      stamp: { principal, platform: "project-directory" },
    });
  } catch (error) {
    if (errorCode(error) === "IDEMPOTENCY_CONFLICT") {
      throw new ItxError("INVALID_ARGUMENT", `the project slug "${record.slug}" is taken`, { details: { reason: "slug-taken" } });
    }
    throw error;
  }
}

export async function findProject(env: Env, slugOrId: string): Promise<ProjectRecord | undefined> {
  const key = slugOrId.startsWith("prj_") ? `project/id-claimed:${slugOrId}` : `project/slug-claimed:${slugOrId}`;
  const event = await directory(env).getByIdempotencyKey(key);
  return event ? (event.payload as ProjectRecord) : undefined;
}

/** Every claimed project, oldest first. */
export async function listProjects(env: Env): Promise<ProjectRecord[]> {
  const records: ProjectRecord[] = [];
  let afterOffset = 0;
  for (;;) {
    const page: StreamEvent[] = await directory(env).getEvents({ afterOffset, types: [PROJECT_SLUG_CLAIMED], limit: 500 });
    records.push(...page.map((event) => event.payload as ProjectRecord));
    const last = page.at(-1);
    if (!last) return records; // A short page is not the end: pages stop at READ_PAGE_MAX_BYTES too.
    afterOffset = last.offset;
  }
}

function directory(env: Env) {
  return streamStub(env.STREAM, DIRECTORY_STREAM);
}
