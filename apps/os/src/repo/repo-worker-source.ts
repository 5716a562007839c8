import { ItxError } from "iterate/errors";
import type { Env } from "../env.ts";
import { relay } from "../api/relay.ts";
import { unwrapCoded } from "../api/coded-result.ts";
import { isCommitId, parseRepoPath } from "./repo-names.ts";
import { repoStub } from "./repo-stub.ts";

/**
 * A dynamic worker's source read from a repository: `{ repo, branch | commit, include?,
 * exclude?, entryPoint? }`. A branch is late-bound (each load reads its head now, so the next
 * load after a commit runs the new code); a commit is pinned. Builds are cached by content, so
 * an unchanged head does not rebuild.
 */
export interface RepoWorkerSource {
  repo: string;
  branch?: string;
  commit?: string;
  include?: string | string[];
  exclude?: string | string[];
  entryPoint?: string;
}

/** Whether a worker ref's source names a repository. */
export function isRepoSource(source: unknown): boolean {
  return typeof source === "object" && source !== null && "repo" in source;
}

/** The `{ files, entryPoint? }` a repository source stands for, read from the repository now. */
export async function readRepoSource(env: Env, projectId: string, source: unknown): Promise<{ files: Record<string, string>; entryPoint?: string; commit: string }> {
  const { repo, branch, commit, include, exclude, entryPoint, ...rest } = source as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `a repo source has no field(s) ${Object.keys(rest).join(", ")}`);
  if ((branch === undefined) === (commit === undefined)) throw new ItxError("INVALID_ARGUMENT", "a repo source takes a branch or a commit");
  if (commit !== undefined && (typeof commit !== "string" || !isCommitId(commit))) throw new ItxError("INVALID_ARGUMENT", "commit is a 40-character commit id");
  const at = branch !== undefined ? { branch } : { commit };
  const masks = { ...(include === undefined ? {} : { include }), ...(exclude === undefined ? {} : { exclude }) };
  const snapshot = unwrapCoded(await relay(repoStub(env, projectId, parseRepoPath(repo)).snapshot(at, masks)));
  const files: Record<string, string> = {};
  for (const [path, content] of Object.entries(snapshot.files)) {
    if (typeof content !== "string") throw new ItxError("INVALID_ARGUMENT", `${path} is not text: leave it out of the worker with exclude`);
    files[path] = content;
  }
  if (entryPoint !== undefined && typeof entryPoint !== "string") throw new ItxError("INVALID_ARGUMENT", "entryPoint names a file");
  return { files, commit: snapshot.commit, ...(entryPoint === undefined ? {} : { entryPoint }) };
}
