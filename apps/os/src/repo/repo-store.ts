import { isDescendent, log, readBlob, readCommit, writeCommit } from "isomorphic-git";
import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";
import { REPO_BRANCH_CREATED, REPO_BRANCH_DELETED, REPO_COMMIT_COMPLETED, type CommitCompleted } from "./repo-events.ts";
import { isCommitId, parseBranchName } from "./repo-names.ts";
import { RepoRefs, type PendingEvent, type RefUpdate } from "./repo-refs.ts";
import { createFsTable, SqliteFs } from "./sqlite-fs.ts";
import { PackedObjects } from "./packed-objects.ts";
import { updateTree, walkTree, type FileChange, type ObjectStore } from "./repo-tree.ts";

/** Who is acting: stamped on the facts and written as the commit's author. */
export interface Actor {
  principal: string;
  origin: string;
}

/** One commit as `log` answers it. */
export interface LogEntry {
  commit: string;
  parents: string[];
  author: string;
  message: string;
  timestamp: number;
}

/**
 * A repository's objects and refs in one Durable Object's SQLite, and the operations on them.
 * Every change follows one order: write objects into the stage, check them against the limits,
 * flush them, then move refs by compare-and-swap with the facts queued in the same transaction.
 * Whatever stops in between leaves the refs where they were.
 */
export class RepoStore {
  readonly refs: RepoRefs;
  readonly objects: ObjectStore;
  /** Objects of stored packs, read by range (isomorphic-git sees them as loose objects). */
  readonly packs: PackedObjects;
  readonly #storage: DurableObjectStorage;
  /** Test seam: runs after objects are flushed and before refs move (a crash there must lose nothing). */
  beforeRefMove: (() => void) | undefined;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    createFsTable(storage.sql);
    this.refs = new RepoRefs(storage);
    this.objects = { fs: new SqliteFs(storage.sql), gitdir: "/git", cache: {} };
    this.packs = new PackedObjects(this.objects.fs);
    this.objects.fs.packed = this.packs;
  }

  get fs(): SqliteFs {
    return this.objects.fs;
  }

  /** Whether the repository holds object `oid` (stored loose or in a pack, or staged by the change under way). */
  holds(oid: string): boolean {
    return this.fs.fileSize(`${this.objects.gitdir}/objects/${oid.slice(0, 2)}/${oid.slice(2)}`) !== undefined || this.packs.has(oid);
  }

  /** The default branch, or NOT_FOUND before the repository is created. */
  defaultBranch(path: string): string {
    const meta = this.refs.meta();
    if (!meta) throw new ItxError("NOT_FOUND", `no repository ${path}`);
    return meta.defaultBranch;
  }

  /** The commit a ref names: a branch (`main`, `refs/heads/main`) or a full commit id. */
  async resolve(ref: string): Promise<string> {
    if (isCommitId(ref)) {
      try {
        await readCommit({ ...this.objects, oid: ref });
        return ref;
      } catch {
        throw new ItxError("NOT_FOUND", `no commit ${ref}`);
      }
    }
    const full = ref.startsWith("refs/") ? ref : `refs/heads/${ref}`;
    const oid = this.refs.get(full);
    if (!oid) throw new ItxError("NOT_FOUND", `no branch ${ref}`);
    return oid;
  }

  /**
   * Commits `files` onto `branch` (created if missing). `expectedHead` (a commit id, or null for
   * "the branch does not exist yet") must match the branch's head, else OFFSET_CONFLICT.
   */
  async commit(input: { branch: string; message: string; files: Map<string, FileChange>; expectedHead?: string | null }, actor: Actor): Promise<CommitCompleted> {
    const ref = `refs/heads/${input.branch}`;
    const head = this.refs.get(ref) ?? null;
    if (input.expectedHead !== undefined && input.expectedHead !== head) {
      throw new ItxError("OFFSET_CONFLICT", `branch ${input.branch} is at ${head ?? "nothing"}, not ${input.expectedHead ?? "nothing"}`, {
        details: { branch: input.branch, head, expected: input.expectedHead },
      });
    }
    try {
      const parentTree = head ? (await readCommit({ ...this.objects, oid: head })).commit.tree : undefined;
      const changedPaths: string[] = [];
      const tree = (await updateTree(this.objects, parentTree, input.files, changedPaths)) as string;
      const timestamp = Math.floor(Date.now() / 1000);
      const person = { name: actor.principal, email: `${actor.principal.replace(/[<>\n]/g, "_")}@iterate.invalid`, timestamp, timezoneOffset: 0 };
      const parents = head ? [head] : [];
      const commit = await writeCommit({ ...this.objects, commit: { tree, parent: parents, author: person, committer: person, message: `${input.message}\n` } });
      const fact: CommitCompleted = { branch: input.branch, commit, parents, author: actor.principal, message: input.message, changedPaths };
      const events: PendingEvent[] = [{ type: REPO_COMMIT_COMPLETED, payload: { ...fact }, ...actor }];
      if (!head) events.unshift({ type: REPO_BRANCH_CREATED, payload: { branch: input.branch, commit }, ...actor });
      this.publish([{ ref, from: head, to: commit }], events);
      return fact;
    } finally {
      this.discard();
    }
  }

  /**
   * Ends a change: drops what it left staged (a refused change's objects), isomorphic-git's cache
   * (it never sees a pack, `SqliteFs` lists none, but nothing it read for the change is kept), and
   * the index of a refused push's pack from `packs`.
   */
  discard(): void {
    this.fs.discard();
    this.objects.cache = {};
    this.packs.refresh();
  }

  /**
   * Makes what is staged durable and moves the refs: the size and branch-count checks, the object
   * flush (one transaction), then the compare-and-swap of every ref with its facts (another).
   */
  publish(updates: RefUpdate[], events: PendingEvent[]): void {
    const size = this.fs.storedBytes() + this.fs.stagedBytes();
    if (size > LIMITS.REPO_SIZE_MAX_BYTES) {
      throw new ItxError("INVALID_ARGUMENT", `the repository would hold ${size} bytes, more than ${LIMITS.REPO_SIZE_MAX_BYTES}; nothing was written`, {
        details: limitDetails("REPO_SIZE_MAX_BYTES"),
      });
    }
    this.refs.checkCount(updates);
    this.#storage.transactionSync(() => this.fs.flush());
    this.beforeRefMove?.();
    this.refs.moveRefs(updates, events);
  }

  /** A file's bytes at `ref`, or NOT_FOUND. */
  async readFile(ref: string, path: string): Promise<Uint8Array> {
    const oid = await this.resolve(ref);
    try {
      return (await readBlob({ ...this.objects, oid, filepath: path })).blob;
    } catch {
      throw new ItxError("NOT_FOUND", `no file ${path} at ${ref}`);
    }
  }

  /** Every file at `ref` as `[path, blob oid]`. */
  async files(ref: string): Promise<Array<[string, string]>> {
    const oid = await this.resolve(ref);
    const { commit } = await readCommit({ ...this.objects, oid });
    return walkTree(this.objects, commit.tree);
  }

  /** The blob `oid`'s bytes. */
  async blob(oid: string): Promise<Uint8Array> {
    return (await readBlob({ ...this.objects, oid })).blob;
  }

  /** Commits reachable from `ref`, newest first. */
  async log(ref: string, limit: number): Promise<LogEntry[]> {
    const oid = await this.resolve(ref);
    const entries = await log({ ...this.objects, ref: oid, depth: limit });
    return entries.map((entry) => ({
      commit: entry.oid,
      parents: entry.commit.parent,
      author: entry.commit.author.name,
      message: entry.commit.message.replace(/\n$/, ""),
      timestamp: entry.commit.author.timestamp,
    }));
  }

  /** Every branch and its head. */
  branches(): Array<{ name: string; head: string }> {
    return this.refs
      .all()
      .filter((row) => row.ref.startsWith("refs/heads/"))
      .map((row) => ({ name: row.ref.slice("refs/heads/".length), head: row.oid }));
  }

  /** A new branch at `from` (a ref); OFFSET_CONFLICT when it exists. */
  async createBranch(name: string, from: string, actor: Actor): Promise<{ name: string; head: string }> {
    parseBranchName(name);
    const head = await this.resolve(from);
    this.refs.moveRefs([{ ref: `refs/heads/${name}`, from: null, to: head }], [{ type: REPO_BRANCH_CREATED, payload: { branch: name, commit: head }, ...actor }]);
    return { name, head };
  }

  /** Deletes a branch (not the default one); `expectedHead` guards it like a commit's. */
  async deleteBranch(name: string, defaultBranch: string, expectedHead: string | undefined, actor: Actor): Promise<void> {
    if (name === defaultBranch) throw new ItxError("INVALID_ARGUMENT", `${name} is the default branch and cannot be deleted`);
    const head = await this.resolve(name);
    if (expectedHead !== undefined && expectedHead !== head) {
      throw new ItxError("OFFSET_CONFLICT", `branch ${name} is at ${head}, not ${expectedHead}`, { details: { branch: name, head, expected: expectedHead } });
    }
    this.refs.moveRefs([{ ref: `refs/heads/${name}`, from: head, to: null }], [{ type: REPO_BRANCH_DELETED, payload: { branch: name, commit: head }, ...actor }]);
  }

  /** Whether `oid` is `ancestor` or descends from it. */
  async descends(oid: string, ancestor: string): Promise<boolean> {
    if (oid === ancestor) return true;
    return isDescendent({ ...this.objects, oid, ancestor, depth: -1 });
  }
}

