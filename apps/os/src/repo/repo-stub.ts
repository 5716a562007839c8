import type { Env } from "../env.ts";
import type { RepoDurableObject } from "./repo-durable-object.ts";

/** The repository Durable Object of `path` in `projectId`. */
export function repoStub(env: Env, projectId: string, path: string): DurableObjectStub<RepoDurableObject> {
  return env.REPO.getByName(`${projectId}:${path}`);
}
