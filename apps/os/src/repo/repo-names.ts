import { ItxError } from "iterate/errors";
import { LIMITS } from "../limits.ts";
import { parseStreamPath } from "../stream/coordinate.ts";

/** Where repositories live in a project: `/repos/<name>` (and deeper). */
export const REPOS_PREFIX = "/repos/";

/** The project's configuration repository, `itx.repo`. */
export const CONFIG_REPO_PATH = "/repos/config";

/** The branch a new repository starts on and refs default to. */
export const DEFAULT_BRANCH = "main";

/** A repository path (`/repos/<name>`), or INVALID_ARGUMENT. */
export function parseRepoPath(path: unknown): string {
  const parsed = parseStreamPath(path);
  if (!parsed.startsWith(REPOS_PREFIX)) {
    throw new ItxError("INVALID_ARGUMENT", `a repository lives under ${REPOS_PREFIX} (for example /repos/site), got ${JSON.stringify(parsed)}`);
  }
  return parsed;
}

// Git's own rules (git check-ref-format), narrowed: segments of letters, digits and . _ - joined
// by "/", none starting with "." or ending with ".lock", no "..", not starting with "-".
const BRANCH_SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** A branch name (`main`, `feature/x`), or INVALID_ARGUMENT naming the rule it broke. */
export function parseBranchName(name: unknown): string {
  if (typeof name !== "string" || name.length === 0) throw new ItxError("INVALID_ARGUMENT", "a branch name is a non-empty string");
  if (name.length > LIMITS.REPO_BRANCH_NAME_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `a branch name is at most ${LIMITS.REPO_BRANCH_NAME_MAX_LENGTH} characters`, {
      details: { limit: "REPO_BRANCH_NAME_MAX_LENGTH" },
    });
  }
  const bad = name.includes("..") || name.startsWith("-") || name === "HEAD" ||
    name.split("/").some((segment) => !BRANCH_SEGMENT.test(segment) || segment.endsWith(".lock") || segment.endsWith("."));
  if (bad) {
    throw new ItxError("INVALID_ARGUMENT", `${JSON.stringify(name)} is not a branch name: use letters, digits and . _ - in segments joined by /`, {
      details: { limit: "REPO_BRANCH_NAME_RULES" },
    });
  }
  return name;
}

/** A branch name from a full ref (`refs/heads/x`), or undefined for any other ref. */
export function branchOfRef(ref: string): string | undefined {
  return ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : undefined;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A file path inside a repository (`src/index.ts`), or INVALID_ARGUMENT. */
export function parseFilePath(path: unknown): string {
  if (typeof path !== "string" || path.length === 0) throw new ItxError("INVALID_ARGUMENT", "a file path is a non-empty string");
  if (path.length > LIMITS.REPO_FILE_PATH_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `a file path is at most ${LIMITS.REPO_FILE_PATH_MAX_LENGTH} characters`, {
      details: { limit: "REPO_FILE_PATH_MAX_LENGTH", path: path.slice(0, 64) },
    });
  }
  const segments = path.split("/");
  const bad = CONTROL.test(path) || path.includes("\\") ||
    segments.some((segment) => segment === "" || segment === "." || segment === ".." || segment.toLowerCase() === ".git");
  if (bad) throw new ItxError("INVALID_ARGUMENT", `${JSON.stringify(path)} is not a file path: relative, "/"-separated, no empty, ".", ".." or ".git" segments`);
  return path;
}

/** True for a full 40-hex commit id. */
export function isCommitId(value: string): boolean {
  return /^[0-9a-f]{40}$/.test(value);
}
