import type { RepoCommit } from "iterate/types";

/** The repo domain's facts, each appended by the repo's Durable Object (platform writer "repo"). */
/** A repository was created: its path and default branch. */
export const REPO_CREATED = "events.iterate.com/repo/created";
/** A branch moved to a new commit (an API commit or one commit of a push). */
export const REPO_COMMIT_COMPLETED = "events.iterate.com/repo/commit-completed";
/** A branch was created (by createBranch or a push). */
export const REPO_BRANCH_CREATED = "events.iterate.com/repo/branch-created";
/** A branch was deleted. */
export const REPO_BRANCH_DELETED = "events.iterate.com/repo/branch-deleted";
/** A row of the project's repository directory (`/repos`), for `itx.repos.list()`. */
export const REPO_LISTED = "events.iterate.com/repo/listed";

/** The stream that lists a project's repositories. */
export const REPO_DIRECTORY_PATH = "/repos";

/** The payload of repo/commit-completed: the contract's RepoCommit, which `commit()` also answers. */
export type CommitCompleted = RepoCommit;
