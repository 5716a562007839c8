import { relay } from "../api/relay.ts";
import { unwrapCoded } from "../api/coded-result.ts";
import type { Caller } from "../capability-host/capability-host-api.ts";
import { ensureRootChild } from "../itx/context-lifecycle.ts";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import { REPO_DIRECTORY_PATH, REPO_LISTED } from "./repo-events.ts";
import { repoStub } from "./repo-stub.ts";

/** Lists `path` in the project's repository directory (keyed: listing it again lands nothing). */
export async function listRepository(env: Env, projectId: string, path: string, caller: Caller): Promise<void> {
  await new StreamRpcTarget(streamStub(env.STREAM, `${projectId}:${REPO_DIRECTORY_PATH}`), { principal: caller.principal, origin: caller.origin, platform: "repo" }).append({
    type: REPO_LISTED,
    payload: { path },
    idempotencyKey: `repo/listed:${path}`,
  });
}

/** What a seeded repository's branch holds, and whether this call put it there. */
export interface Seeded {
  commit: string;
  committed: boolean;
}

/**
 * Get-or-create of the repository at `path` with a first commit on `branch`: what `repos.create`
 * then `commit({ expectedHead: null })` would do, with the three independent writes (the
 * context's birth, the repository and its commit, the directory's row) sent at once. Each is
 * get-or-create, so a repeat after a crash lands nothing new and answers the branch's head.
 */
export async function seedRepository(
  env: Env,
  input: { projectId: string; path: string; caller: Caller; branch: string; message: string; files: Record<string, string> },
): Promise<Seeded> {
  const { projectId, path, caller } = input;
  const [, seeded] = await Promise.all([
    // A context already at `path` born under another parent is refused (not-root-born): its
    // ancestors would hold authority over the repository's context.
    ensureRootChild(env, { projectId, path, name: path.slice(path.lastIndexOf("/") + 1), caller }, "repository"),
    relay(repoStub(env, projectId, path).seed({ branch: input.branch, message: input.message, files: input.files }, { principal: caller.principal, origin: caller.origin })),
    listRepository(env, projectId, path, caller),
  ]);
  return unwrapCoded(seeded);
}
