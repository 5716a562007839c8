import { Errors, readCommit, readObject, readTree, type CommitObject } from "isomorphic-git";
import { deflate } from "pako";
import { packStream, zlib } from "./pack-stream.ts";
import { DEPTH_KEPT, framed } from "./packed-objects.ts";
import { PACK_OBJECT_WORK_BYTES, checkPackInflation } from "./pack-inflation.ts";
import { ThreadShare } from "../limits/thread-share.ts";
import { ItxError, errorCode, errorMessage } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";
import { REPO_BRANCH_CREATED, REPO_BRANCH_DELETED, REPO_COMMIT_COMPLETED } from "./repo-events.ts";
import { checkFileSize } from "./repo-input.ts";
import { branchOfRef, parseBranchName, parseFilePath } from "./repo-names.ts";
import type { PendingEvent, RefUpdate } from "./repo-refs.ts";
import type { Actor, RepoStore } from "./repo-store.ts";
import { diffTrees, type ObjectStore } from "./repo-tree.ts";

/** What a git client is shown: every ref and the branch HEAD names. */
export interface RefAdvertisement {
  defaultBranch: string;
  refs: Array<{ ref: string; oid: string }>;
}

/** One ref update of a push (`null`: the ref does not exist before, or is deleted after). */
export interface PushCommand {
  from: string | null;
  to: string | null;
  ref: string;
}

/** Whether `oid` names a commit the repository holds (a fetch's wants and haves may name anything). */
async function isCommit(store: ObjectStore, oid: string): Promise<boolean> {
  try {
    await readCommit({ ...store, oid });
    return true;
  } catch {
    return false;
  }
}

/** Every commit reachable from `tips`. */
async function ancestry(store: ObjectStore, tips: string[]): Promise<Set<string>> {
  const seen = new Set<string>();
  const stack = [...tips];
  for (let oid = stack.pop(); oid !== undefined; oid = stack.pop()) {
    if (seen.has(oid)) continue;
    seen.add(oid);
    stack.push(...(await readCommit({ ...store, oid })).commit.parent);
  }
  return seen;
}

/**
 * Refuses a want no ref reaches, as git does by default (`uploadpack.allowReachableSHA1InWant`):
 * the history of a deleted branch is not served to whoever knows its id. A want that is a ref's
 * tip (every clone's and fetch's) costs nothing more; any other is looked for in the refs'
 * history, which stops as soon as every such want is found.
 */
async function checkReachable(repo: RepoStore, wants: string[]): Promise<void> {
  const tips = repo.refs.all().map(({ oid }) => oid);
  const tipSet = new Set(tips);
  const outstanding = new Set(wants.filter((want) => !tipSet.has(want)));
  if (outstanding.size === 0) return;
  const seen = new Set<string>();
  const stack = [...tips];
  for (let oid = stack.pop(); oid !== undefined && outstanding.size > 0; oid = stack.pop()) {
    if (seen.has(oid)) continue;
    seen.add(oid);
    // A tag's id reads as the commit it names (isomorphic-git peels it): that commit is reached too.
    const { oid: commitOid, commit } = await readCommit({ ...repo.objects, oid });
    outstanding.delete(oid);
    outstanding.delete(commitOid);
    stack.push(...commit.parent);
  }
  const [unreached] = outstanding;
  if (unreached !== undefined) throw new ItxError("NOT_FOUND", `not our ref ${unreached}: no branch reaches it`);
}

/** Adds `tree` and everything under it to `into`, skipping what `skip` holds. */
async function collectTree(store: ObjectStore, tree: string, into: Set<string>, skip: Set<string>): Promise<void> {
  if (into.has(tree) || skip.has(tree)) return;
  into.add(tree);
  for (const entry of (await readTree({ ...store, oid: tree })).tree) {
    if (entry.type === "tree") await collectTree(store, entry.oid, into, skip);
    else if (entry.type === "blob" && !skip.has(entry.oid)) into.add(entry.oid);
  }
}

/**
 * The objects `wants` reach that the client does not have, as one pack. The client has every
 * object its `haves` reach (git's contract), so commits it has are skipped and the files of the
 * commits it has are not sent again.
 */
export async function uploadPack(repo: RepoStore, wantList: string[], haveList: string[]): Promise<{ pack: ReadableStream<Uint8Array>; common: string[] }> {
  const store = repo.objects;
  // Each want and have is an object read: a 1 MiB negotiation repeating one id 19,000 times held
  // the repository's thread 18 s. Repeats are read once; wants are ref tips, so a client names at
  // most as many as there are branches; haves only save sending what the client has, so those
  // past GIT_FETCH_HAVES_MAX are not looked up (the pack may hold objects the client has).
  const wants = [...new Set(wantList)];
  if (wants.length > LIMITS.GIT_FETCH_WANTS_MAX) {
    throw new ItxError("INVALID_ARGUMENT", `a fetch wants at most ${LIMITS.GIT_FETCH_WANTS_MAX} objects`, { details: limitDetails("GIT_FETCH_WANTS_MAX") });
  }
  const haves = [...new Set(haveList)].slice(0, LIMITS.GIT_FETCH_HAVES_MAX);
  // Wants are ref tips, so commits: any other object (a blob's id) is not ours to serve as one.
  for (const want of wants) {
    if (!(await isCommit(store, want))) throw new ItxError("NOT_FOUND", `not our ref ${want}`);
  }
  await checkReachable(repo, wants);
  const common: string[] = [];
  for (const have of haves) if (await isCommit(store, have)) common.push(have);
  const known = await ancestry(store, common);
  const skip = new Set<string>();
  for (const oid of common) await collectTree(store, (await readCommit({ ...store, oid })).commit.tree, skip, new Set());
  const send = new Set<string>();
  const stack = [...wants];
  for (let oid = stack.pop(); oid !== undefined; oid = stack.pop()) {
    if (known.has(oid) || send.has(oid)) continue;
    send.add(oid);
    const { commit } = await readCommit({ ...store, oid });
    await collectTree(store, commit.tree, send, skip);
    stack.push(...commit.parent);
  }
  return { pack: packStream(store, repo.packs, [...send]), common };
}

/**
 * Stores a pushed pack and moves the refs it asks for. A ref whose client view is stale, or whose
 * move is not a fast-forward, is refused alone; a pack over a limit refuses the whole push and
 * keeps none of it. Every accepted move is one compare-and-swap with its facts.
 */
export async function receivePack(repo: RepoStore, commands: PushCommand[], pack: Uint8Array | null, actor: Actor): Promise<Array<{ ref: string; error?: string }>> {
  const store = repo.objects;
  try {
    let incoming = new Set<string>();
    let commits = new Set<string>();
    const share = new ThreadShare();
    if (pack && pack.byteLength > 0) {
      // Each pass inflates every object on this object's thread (locally, the whole OS's): each
      // gives the thread up between objects (ThreadShare), so other calls are not held for all of it.
      const { inflated, entries } = await checkPackInflation(pack, share);
      const packPath = `${store.gitdir}/objects/pack/pack-push-${crypto.randomUUID()}.pack`;
      store.fs.stage(packPath, pack);
      ({ objects: incoming, commits } = await indexPushed(repo, packPath, entries, inflated, share));
    }
    const results: Array<{ ref: string; error?: string }> = [];
    const updates: RefUpdate[] = [];
    const events: PendingEvent[] = [];
    const checked = new Set<string>();
    for (const command of commands) {
      const refused = await unsafePathsRefused(() => planCommand(repo, command, incoming, actor, updates, events, checked));
      results.push(refused ? { ref: command.ref, error: refused } : { ref: command.ref });
    }
    if (updates.length === 0) return results;
    await unsafePathsRefused(() => checkUnnamedCommits(repo, commits, checked, share));
    try {
      repo.publish(updates, events);
    } catch (error) {
      if (errorCode(error) === "OFFSET_CONFLICT") return results.map(({ ref }) => ({ ref, error: "fetch first" }));
      throw error;
    }
    return results;
  } catch (error) {
    // A limit refuses every ref; anything uncoded is a bug and surfaces as one.
    const code = errorCode(error);
    if (code === undefined) throw error;
    return commands.map(({ ref }) => ({ ref, error: `[${code}] ${errorMessage(error)}` }));
  } finally {
    repo.discard();
  }
}

/**
 * A tree isomorphic-git refuses to read (an entry named `..` or `.git`) is the push's fault,
 * INVALID_ARGUMENT; any other failure while planning is still a bug and surfaces as one.
 */
async function unsafePathsRefused<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof Errors.UnsafeFilepathError) {
      throw new ItxError("INVALID_ARGUMENT", `a pushed tree holds a path no checkout may write: ${errorMessage(error).slice(0, 200)}`, { cause: error });
    }
    // Reading the pushed history (the fast-forward walk, the commits it adds) met an object that is
    // missing or not the type its name says: refused, coded, instead of an uncoded failure.
    if (error instanceof Errors.NotFoundError || error instanceof Errors.ObjectTypeError) {
      throw missingObjects(`the pushed history names an object that is missing or of another type (${errorMessage(error).slice(0, 200)})`);
    }
    throw error;
  }
}

/**
 * Indexes a pushed pack with the store's `PackedObjects`, by the same rules every later read follows, so the
 * two cannot disagree (isomorphic-git is not asked: its indexer reads numbers in 32 bits, skips
 * entries it cannot resolve, and keeps every object it resolves in memory). Each entry is read,
 * strictly (it inflates to exactly its bytes, its header is not padded, a delta's base is an
 * earlier entry or an older object), and hashed for its id. The same pass holds blobs to
 * REPO_FILE_MAX_BYTES, counts the pack's commits (REPO_PUSH_COMMITS_MAX) and the bytes it
 * rebuilds (twice GIT_PUSH_INFLATED_MAX_BYTES). An entry whose delta chain, counted through
 * earlier pushes, is longer than DEPTH_KEPT is kept whole as a loose row (git's thin packs send
 * every edited file as a delta on the stored one, so a file's chain would otherwise grow with
 * every push). A small pack of whole objects is kept as loose rows altogether, as is every pack
 * once the repository holds REPO_PACKS_MAX: each stored pack's index stays in memory. What is
 * kept whole counts toward GIT_PUSH_KEPT_WHOLE_MAX_BYTES. Answers every object and the commits.
 */
async function indexPushed(repo: RepoStore, packPath: string, entries: number[], inflated: number, share: ThreadShare): Promise<{ objects: Set<string>; commits: Set<string> }> {
  const store = repo.objects;
  const stored = repo.fs.storedFiles(`${store.gitdir}/objects/pack/`).filter((path) => path.endsWith(".idx"));
  // The store's own reader: the stored indexes it parsed, and the objects and chunks it keeps.
  const packs = repo.packs;
  // A small pack of whole objects is kept as loose rows; one of deltas on large files (an edit
  // pushed thin) stays a pack, unless the repository holds REPO_PACKS_MAX packs already.
  const packBytes = repo.fs.fileSize(packPath) ?? 0;
  const asLoose = (packBytes < LIMITS.REPO_PACK_MIN_BYTES && inflated <= 8 * Math.max(packBytes, 8_192)) || stored.length >= LIMITS.REPO_PACKS_MAX;
  const objects = new Set<string>();
  const commits = new Set<string>();
  let keptWhole = 0;
  let built = 0;
  try {
    const index = await packs.indexPack(packPath, entries, async ({ oid, object, depth, built: work }) => {
      const bytes = framed(object);
      objects.add(oid);
      if (object.type === "blob") checkFileSize(oid, object.content.byteLength);
      if (object.type === "commit") commits.add(oid);
      if (commits.size > LIMITS.REPO_PUSH_COMMITS_MAX) {
        throw new ItxError("INVALID_ARGUMENT", `a pushed pack carries more than ${LIMITS.REPO_PUSH_COMMITS_MAX} commits; push in parts`, { details: limitDetails("REPO_PUSH_COMMITS_MAX") });
      }
      // Deltas rebuilt again and again (a chain of large objects read out of order) are work too.
      built += work;
      if (built > 2 * LIMITS.GIT_PUSH_INFLATED_MAX_BYTES) {
        throw new ItxError("INVALID_ARGUMENT", `reading the pushed pack back rebuilds more than twice ${LIMITS.GIT_PUSH_INFLATED_MAX_BYTES} bytes; push in parts`, {
          details: limitDetails("GIT_PUSH_INFLATED_MAX_BYTES"),
        });
      }
      await share.did(work + PACK_OBJECT_WORK_BYTES);
      if (!asLoose && depth <= DEPTH_KEPT) return false;
      const path = `${store.gitdir}/objects/${oid.slice(0, 2)}/${oid.slice(2)}`;
      if (repo.fs.fileSize(path) !== undefined) return true;
      // Small objects are compressed at once (a native stream per object costs more than the work).
      const loose = bytes.byteLength < 65_536 ? deflate(bytes) : await zlib(bytes);
      keptWhole += loose.byteLength;
      if (keptWhole > LIMITS.GIT_PUSH_KEPT_WHOLE_MAX_BYTES) {
        throw new ItxError("INVALID_ARGUMENT", `more than ${LIMITS.GIT_PUSH_KEPT_WHOLE_MAX_BYTES} bytes of this push must be kept as whole objects; push in parts`, {
          details: limitDetails("GIT_PUSH_KEPT_WHOLE_MAX_BYTES"),
        });
      }
      repo.fs.stage(path, loose);
      return true;
    });
    if (asLoose) repo.fs.unstage(packPath);
    else repo.fs.stage(packPath.replace(/\.pack$/, ".idx"), index);
  } catch (error) {
    if (errorCode(error) !== "INTERNAL") throw error;
    throw malformedPack(errorMessage(error).replace(/^.*cannot be read: /, ""));
  }
  if (asLoose) return { objects, commits };
  // The new pack's index is staged: the reader lists it with the stored ones.
  const held = packs.count();
  if (held > LIMITS.REPO_PACKED_OBJECTS_MAX) {
    throw new ItxError("INVALID_ARGUMENT", `the repository's pushed packs would hold ${held} objects, more than ${LIMITS.REPO_PACKED_OBJECTS_MAX}; nothing was written`, {
      details: limitDetails("REPO_PACKED_OBJECTS_MAX"),
    });
  }
  return { objects, commits };
}

function malformedPack(why: string): ItxError {
  return new ItxError("INVALID_ARGUMENT", `the pushed pack could not be read back: ${why.slice(0, 300)}`);
}

/**
 * Every commit of a kept pack is held to the rules a pushed commit is, not only those an accepted
 * ref move reaches (`checked`): the pack is stored whole, with a refused ref's commits and any no
 * ref names, and a branch made at one of them later (a push, `createBranch({ from })`) brings no
 * commit to check.
 */
async function checkUnnamedCommits(repo: RepoStore, commits: Set<string>, checked: Set<string>, share: ThreadShare): Promise<void> {
  const store = repo.objects;
  for (const oid of commits) {
    if (checked.has(oid)) continue;
    let commit: CommitObject;
    try {
      ({ commit } = await readCommit({ ...store, oid }));
    } catch (error) {
      throw new ItxError("INVALID_ARGUMENT", `the pushed commit ${oid} cannot be read: ${errorMessage(error).slice(0, 200)}`);
    }
    await checkParents(repo, oid, commit);
    const parentTree = commit.parent[0] ? await treeOf(repo, commit.parent[0], oid) : undefined;
    const changed = await checkedChanges(repo, parentTree, commit.tree, `commit ${oid}`);
    // A diff costs the trees it reads: count each changed path as a small object's work.
    await share.did(PACK_OBJECT_WORK_BYTES * (1 + changed.length / 16));
  }
}

/** Plans one ref move into `updates`/`events`; answers git's refusal reason, or undefined. */
async function planCommand(repo: RepoStore, command: PushCommand, incoming: Set<string>, actor: Actor, updates: RefUpdate[], events: PendingEvent[], checked: Set<string>): Promise<string | undefined> {
  const store = repo.objects;
  const branch = branchOfRef(command.ref);
  if (branch === undefined) return "only branches (refs/heads/...) can be pushed";
  try {
    parseBranchName(branch);
  } catch (error) {
    return errorMessage(error);
  }
  const current = repo.refs.get(command.ref) ?? null;
  if (current !== command.from) return "fetch first";
  if (command.to === null) {
    if (current === null) return "no such branch";
    if (branch === repo.refs.meta()?.defaultBranch) return "deletion of the current branch prohibited (the repository's default branch)";
    updates.push({ ref: command.ref, from: current, to: null });
    events.push({ type: REPO_BRANCH_DELETED, payload: { branch, commit: current }, ...actor });
    return undefined;
  }
  let tip;
  try {
    tip = await readCommit({ ...store, oid: command.to });
  } catch {
    return "missing necessary objects";
  }
  if (current !== null && !(await repo.descends(command.to, current))) return "non-fast-forward";
  // The commits this push adds, parents first: those whose objects came in the pack.
  const added: string[] = [];
  const seen = new Set<string>();
  const visit = async (oid: string): Promise<void> => {
    if (seen.has(oid) || !incoming.has(oid)) return;
    seen.add(oid);
    if (seen.size > LIMITS.REPO_PUSH_COMMITS_MAX) {
      throw new ItxError("INVALID_ARGUMENT", `a push adds at most ${LIMITS.REPO_PUSH_COMMITS_MAX} commits to a branch`, { details: limitDetails("REPO_PUSH_COMMITS_MAX") });
    }
    for (const parent of (await readCommit({ ...store, oid })).commit.parent) await visit(parent);
    added.push(oid);
  };
  await visit(tip.oid);
  if (current === command.to) return undefined;
  updates.push({ ref: command.ref, from: current, to: command.to });
  if (current === null) events.push({ type: REPO_BRANCH_CREATED, payload: { branch, commit: command.to }, ...actor });
  if (current !== null && added.length === 0) {
    // A move onto commits the repository already holds (another branch's, or ones an earlier pack
    // carried that no ref named): nothing in this pack is a commit of it, yet the branch moved.
    // Its tip is announced, with what the move changes on the branch, and those paths are held to
    // the same rules as a pushed commit's.
    const before = (await readCommit({ ...store, oid: current })).commit.tree;
    events.push(commitCompleted(branch, tip.oid, tip.commit, await checkedChanges(repo, before, tip.commit.tree, `moving ${branch} to ${tip.oid}`), actor));
    return undefined;
  }
  for (const oid of added) {
    const { commit } = await readCommit({ ...store, oid });
    await checkParents(repo, oid, commit);
    const parentTree = commit.parent[0] ? await treeOf(repo, commit.parent[0], oid) : undefined;
    events.push(commitCompleted(branch, oid, commit, await checkedChanges(repo, parentTree, commit.tree, `commit ${oid}`), actor));
    checked.add(oid);
  }
  return undefined;
}

/**
 * A pushed commit's parents are all held: a ref is never moved to a commit whose history cannot be
 * read (a fast-forward check finds the old tip among the parents and looks no further). Its own
 * tree is checked by `checkedChanges`, the parents' trees by their own checks.
 */
async function checkParents(repo: RepoStore, oid: string, commit: CommitObject): Promise<void> {
  for (const parent of commit.parent) {
    if (!repo.holds(parent)) throw missingObjects(`the pushed commit ${oid} names a parent (${parent}) the repository does not hold`);
    await treeOf(repo, parent, oid);
  }
}

/** The tree of commit `oid`, the parent of pushed commit `child`: a commit itself (not a tag that leads to one), or the push is refused. */
async function treeOf(repo: RepoStore, oid: string, child: string): Promise<string> {
  let read;
  try {
    read = await readObject({ ...repo.objects, oid, format: "parsed" });
  } catch (error) {
    throw missingObjects(`the parent ${oid} of the pushed commit ${child} cannot be read (${errorMessage(error).slice(0, 200)})`);
  }
  if (read.type !== "commit") throw missingObjects(`the parent ${oid} of the pushed commit ${child} is a ${read.type}, not a commit`);
  return (read.object as CommitObject).tree;
}

function missingObjects(why: string): ItxError {
  return new ItxError("INVALID_ARGUMENT", `missing necessary objects: ${why}; nothing was written`);
}

/**
 * The paths that differ between two trees, held to the limits a commit's changes are; `what`
 * names the change in a refusal. Every tree read and every file the change adds or changes must
 * be held: with the parent's tree complete, so is this one (git's connectivity check, by diff).
 */
async function checkedChanges(repo: RepoStore, before: string | undefined, after: string, what: string): Promise<string[]> {
  const blobs = new Set<string>();
  let changedPaths: string[];
  try {
    changedPaths = await diffTrees(repo.objects, before, after, LIMITS.REPO_COMMIT_FILES_MAX, "", [], blobs);
  } catch (error) {
    if (!(error instanceof Errors.NotFoundError || error instanceof Errors.ObjectTypeError)) throw error;
    throw missingObjects(`${what} names a tree the repository does not hold`);
  }
  for (const blob of blobs) if (!repo.holds(blob)) throw missingObjects(`${what} names a file (${blob}) the repository does not hold`);
  if (changedPaths.length > LIMITS.REPO_COMMIT_FILES_MAX) {
    throw new ItxError("INVALID_ARGUMENT", `${what} changes more than ${LIMITS.REPO_COMMIT_FILES_MAX} files`, { details: limitDetails("REPO_COMMIT_FILES_MAX") });
  }
  for (const path of changedPaths) parseFilePath(path);
  return changedPaths;
}

function commitCompleted(branch: string, oid: string, commit: CommitObject, changedPaths: string[], actor: Actor): PendingEvent {
  return {
    type: REPO_COMMIT_COMPLETED,
    payload: { branch, commit: oid, parents: commit.parent, author: commit.author.name, message: commit.message.replace(/\n$/, ""), changedPaths },
    ...actor,
  };
}
