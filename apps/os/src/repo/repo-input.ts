import { ItxError } from "iterate/errors";
import { LIMITS } from "../limits.ts";
import { isCommitId, parseBranchName, parseFilePath } from "./repo-names.ts";
import type { FileChange } from "./repo-tree.ts";

/** Longest commit message: it is stored in the commit and in its fact. */
export const COMMIT_MESSAGE_MAX_LENGTH = 65_536;

const ENCODER = new TextEncoder();

/** A validated `commit()` request. */
export interface CommitRequest {
  branch: string;
  message: string;
  files: Map<string, FileChange>;
  expectedHead?: string | null;
}

function record(input: unknown, what: string): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) throw new ItxError("INVALID_ARGUMENT", `${what}`);
  return input as Record<string, unknown>;
}

function noExtra(input: Record<string, unknown>, allowed: string[], what: string): void {
  const extra = Object.keys(input).filter((key) => !allowed.includes(key));
  if (extra.length > 0) throw new ItxError("INVALID_ARGUMENT", `${what} has no field(s) ${extra.join(", ")}`);
}

/** `{ branch, message, files, expectedHead? }`, every limit checked before anything is written. */
export function parseCommitRequest(input: unknown, defaultBranch: string): CommitRequest {
  const shape = "commit takes { branch?, message, files: { [path]: string | Uint8Array | null }, expectedHead? }";
  const raw = record(input, shape);
  noExtra(raw, ["branch", "message", "files", "expectedHead"], "commit");
  const branch = raw.branch === undefined ? defaultBranch : parseBranchName(raw.branch);
  if (typeof raw.message !== "string" || raw.message.trim() === "" || raw.message.length > COMMIT_MESSAGE_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `a commit message is a non-empty string of at most ${COMMIT_MESSAGE_MAX_LENGTH} characters`);
  }
  const files = record(raw.files, shape);
  const paths = Object.keys(files);
  if (paths.length > LIMITS.REPO_COMMIT_FILES_MAX) {
    throw new ItxError("INVALID_ARGUMENT", `a commit changes at most ${LIMITS.REPO_COMMIT_FILES_MAX} files, got ${paths.length}`, {
      details: { limit: "REPO_COMMIT_FILES_MAX" },
    });
  }
  const changes = new Map<string, FileChange>();
  for (const path of paths) {
    const value = files[path];
    const bytes = value === null ? null : typeof value === "string" ? ENCODER.encode(value) : value instanceof Uint8Array ? value : undefined;
    if (bytes === undefined) throw new ItxError("INVALID_ARGUMENT", `file ${JSON.stringify(path)}: content is a string, a Uint8Array or null (delete)`);
    changes.set(parseFilePath(path), bytes);
    if (bytes !== null) checkFileSize(path, bytes.byteLength);
  }
  // A path cannot be both a file and a directory in the same commit.
  for (const path of changes.keys()) {
    for (let slash = path.indexOf("/"); slash > 0; slash = path.indexOf("/", slash + 1)) {
      if (changes.get(path.slice(0, slash))) throw new ItxError("INVALID_ARGUMENT", `${path.slice(0, slash)} is written as a file and used as a directory`);
    }
  }
  const request: CommitRequest = { branch, message: raw.message, files: changes };
  if (raw.expectedHead !== undefined) {
    if (raw.expectedHead !== null && (typeof raw.expectedHead !== "string" || !isCommitId(raw.expectedHead))) {
      throw new ItxError("INVALID_ARGUMENT", "expectedHead is a 40-character commit id, or null for a branch that does not exist yet");
    }
    request.expectedHead = raw.expectedHead;
  }
  return request;
}

/** REPO_FILE_MAX_BYTES for one file. */
export function checkFileSize(path: string, bytes: number): void {
  if (bytes > LIMITS.REPO_FILE_MAX_BYTES) {
    throw new ItxError("INVALID_ARGUMENT", `file ${path.slice(0, 200)} has ${bytes} bytes, more than ${LIMITS.REPO_FILE_MAX_BYTES}; nothing was written`, {
      details: { limit: "REPO_FILE_MAX_BYTES", path: path.slice(0, 200) },
    });
  }
}

/** A ref argument: a branch name, `refs/heads/...`, or a commit id; absent means the default branch. */
export function parseRef(value: unknown, defaultBranch: string): string {
  if (value === undefined) return defaultBranch;
  if (typeof value !== "string") throw new ItxError("INVALID_ARGUMENT", "a ref is a branch name or a commit id");
  if (isCommitId(value)) return value;
  parseBranchName(value.startsWith("refs/heads/") ? value.slice("refs/heads/".length) : value);
  return value;
}

/** `{ ref?, ... }` with only `allowed` fields. */
export function parseOptions(input: unknown, allowed: string[], what: string): Record<string, unknown> {
  if (input === undefined) return {};
  const raw = record(input, `${what} takes { ${allowed.join(", ")} }`);
  noExtra(raw, allowed, what);
  return raw;
}

/** A `log` limit: 1 to REPO_LOG_LIMIT_MAX, default 20. */
export function parseLogLimit(value: unknown): number {
  if (value === undefined) return 20;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > LIMITS.REPO_LOG_LIMIT_MAX) {
    throw new ItxError("INVALID_ARGUMENT", `limit is an integer from 1 to ${LIMITS.REPO_LOG_LIMIT_MAX}`, { details: { limit: "REPO_LOG_LIMIT_MAX" } });
  }
  return value;
}
