import { ItxError } from "iterate/errors";
import type { Principal } from "iterate/types";
import type { Env } from "../env.ts";
import type { Caller } from "../capability-host/capability-host-api.ts";
import { DEPLOYMENT_PROJECT_ID } from "../stream/coordinate.ts";
import { CONFIG_REPO_PATH } from "./repo-names.ts";
import { ReposRpcTarget, RepoRpcTarget } from "./repos-rpc-target.ts";

// How the itx handle and the session reach the repo domain: a few constructors, so that the
// built-in surface (itx-rpc-target.ts, session.ts) needs one line each.

/** `itx.repos` for a handle: the handle's project, acting as the handle's caller. */
export function reposOfScope(env: Env, projectId: () => Promise<string>, caller: Caller): ReposRpcTarget {
  return new ReposRpcTarget({ env, projectId, caller });
}

/** `itx.repo`: the project's configuration repository, NOT_FOUND until something creates it. */
export function configRepoOfScope(env: Env, projectId: () => Promise<string>, caller: Caller): RepoRpcTarget {
  return new RepoRpcTarget({ env, projectId, caller }, CONFIG_REPO_PATH);
}

/**
 * `session.repos`: deployment-wide repositories outside every project, admin only. Anyone else
 * gets NOT_FOUND from every call, the answer for a repository that does not exist.
 */
export function deploymentRepos(env: Env, principal: Principal): ReposRpcTarget {
  const projectId = async () => {
    if (principal.kind !== "admin") throw new ItxError("NOT_FOUND", "no such repository");
    return DEPLOYMENT_PROJECT_ID;
  };
  return new ReposRpcTarget({ env, projectId, caller: { principal: principal.id, origin: "/" } });
}

export type { ReposRpcTarget, RepoRpcTarget };
