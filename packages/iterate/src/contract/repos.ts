// Git repositories: `itx.repos`, `itx.repo` and the admin's `session.repos`.
import type { Description } from "./discovery.ts";

/** `itx.repos` (and the admin's `session.repos`). */
export interface Repos {
  /** Get-or-create: the repository at `path` (`/repos/<name>`), empty on branch `main` when new. */
  create(input: { path: string }): Repo;
  /** A handle on the repository at `path`; its calls answer NOT_FOUND until it is created. */
  get(path: string): Repo;
  /** Every repository of the project, oldest first. */
  list(): Array<{ path: string; createdAt: string }>;
}

/** A branch name (`main`), `refs/heads/<name>`, or a full 40-character commit id. Absent: the default branch. */
export type RepoRef = string;

/** Glob masks over file paths: `*` within a segment, `**` across segments, `?`, `{a,b}`. */
export interface RepoMasks {
  include?: string | string[];
  exclude?: string | string[];
}

/** `repo/commit-completed`'s payload, and what `commit()` answers. */
export interface RepoCommit {
  branch: string;
  commit: string;
  parents: string[];
  author: string;
  message: string;
  changedPaths: string[];
}

/** One commit in `log()`, newest first. */
export interface RepoLogEntry {
  commit: string;
  parents: string[];
  author: string;
  message: string;
  /** Seconds since the epoch. */
  timestamp: number;
}

/** One git repository: objects and refs durable in its Durable Object, facts on the stream at its path. */
export interface Repo {
  __describe(): Description & { path: string; defaultBranch: string; createdAt: string; branches: Array<{ name: string; head: string }>; sizeBytes: number };
  /**
   * Commits files onto `branch` (default `main`, created when missing): a string or bytes writes a
   * file, null deletes it. With `expectedHead` (null: the branch must not exist yet) it is a
   * compare-and-swap: a stale head is OFFSET_CONFLICT and nothing is written.
   */
  commit(input: { branch?: string; message: string; files: Record<string, string | Uint8Array | null>; expectedHead?: string | null }): RepoCommit;
  /** A file's text at a ref (bytes with `encoding: "binary"`); NOT_FOUND when absent. */
  readFile(input: { ref?: RepoRef; path: string; encoding?: "utf8" | "binary" }): string | Uint8Array;
  listFiles(input?: { ref?: RepoRef } & RepoMasks): string[];
  log(input?: { ref?: RepoRef; limit?: number }): RepoLogEntry[];
  branches(): Array<{ name: string; head: string }>;
  /** A new branch at `from` (default: the default branch's head); OFFSET_CONFLICT when it exists. */
  createBranch(input: { name: string; from?: RepoRef }): { name: string; head: string };
  deleteBranch(input: { name: string; expectedHead?: string }): { deleted: true };
  /** Inert file contents (text as strings, other files as bytes) of a branch's head now, or of a commit. */
  snapshot(at: { branch: string } | { commit: string }, masks?: RepoMasks): { commit: string; files: Record<string, string | Uint8Array> };
}
