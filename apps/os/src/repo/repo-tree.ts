import { readTree, writeBlob, writeTree, type TreeEntry } from "isomorphic-git";
import type { SqliteFs } from "./sqlite-fs.ts";
import { ItxError } from "iterate/errors";

/** What tree operations read and write through: the object store and isomorphic-git's cache. */
export interface ObjectStore {
  fs: SqliteFs;
  gitdir: string;
  cache: object;
}

/** A change to one file: new content, or null to delete it. */
export type FileChange = Uint8Array | null;

const BLOB_MODE = "100644";

/**
 * Applies `changes` (by path) to the tree `treeOid` and answers the new tree. Only the trees on a
 * changed path are read and rewritten. `changed` collects the paths whose content really changed
 * (writing identical bytes or deleting a missing file changes nothing).
 */
export async function updateTree(store: ObjectStore, treeOid: string | undefined, changes: Map<string, FileChange>, changed: string[], prefix = ""): Promise<string | undefined> {
  const entries = new Map<string, TreeEntry>();
  if (treeOid) for (const entry of (await readTree({ ...store, oid: treeOid })).tree) entries.set(entry.path, entry);
  const files = new Map<string, FileChange>();
  const dirs = new Map<string, Map<string, FileChange>>();
  for (const [path, change] of changes) {
    const slash = path.indexOf("/");
    if (slash < 0) {
      files.set(path, change);
    } else {
      const dir = path.slice(0, slash);
      const below = dirs.get(dir) ?? new Map<string, FileChange>();
      below.set(path.slice(slash + 1), change);
      dirs.set(dir, below);
    }
  }
  for (const [name, change] of files) {
    const existing = entries.get(name);
    if (change === null) {
      if (existing?.type === "blob") {
        entries.delete(name);
        changed.push(prefix + name);
      }
      continue;
    }
    const oid = await writeBlob({ ...store, blob: change });
    if (existing?.type === "blob" && existing.oid === oid) continue;
    entries.set(name, { mode: BLOB_MODE, path: name, oid, type: "blob" });
    changed.push(prefix + name);
  }
  for (const [name, below] of dirs) {
    const existing = entries.get(name);
    const subtree = await updateTree(store, existing?.type === "tree" ? existing.oid : undefined, below, changed, `${prefix}${name}/`);
    if (subtree === undefined) {
      if (existing?.type === "tree") entries.delete(name);
    } else if (subtree !== existing?.oid) {
      entries.set(name, { mode: "040000", path: name, oid: subtree, type: "tree" });
    }
  }
  if (entries.size === 0 && prefix !== "") return undefined;
  return writeTree({ ...store, tree: [...entries.values()] });
}

/** Every file under `treeOid`, as `[path, blob oid]`, in tree order. */
export async function walkTree(store: ObjectStore, treeOid: string, prefix = "", out: Array<[string, string]> = []): Promise<Array<[string, string]>> {
  for (const entry of (await readTree({ ...store, oid: treeOid })).tree) {
    if (entry.type === "tree") await walkTree(store, entry.oid, `${prefix}${entry.path}/`, out);
    else if (entry.type === "blob") out.push([`${prefix}${entry.path}`, entry.oid]);
  }
  return out;
}

/**
 * The entries of tree `oid`. isomorphic-git reads a commit or tag named where a tree is expected as
 * the tree it leads to; a stored tree entry must name a tree itself, so that is refused here.
 */
async function treeEntries(store: ObjectStore, oid: string): Promise<TreeEntry[]> {
  const read = await readTree({ ...store, oid });
  if (read.oid !== oid) throw new ItxError("INVALID_ARGUMENT", `${oid} is named as a tree and is not one`);
  return read.tree;
}

/** Paths whose file differs between two trees (added, changed or removed). Stops past `max`. `blobs` collects the files of `after` among them. */
export async function diffTrees(store: ObjectStore, before: string | undefined, after: string | undefined, max: number, prefix = "", out: string[] = [], blobs?: Set<string>): Promise<string[]> {
  if (before === after || out.length > max) return out;
  const a = before ? await treeEntries(store, before) : [];
  const b = after ? await treeEntries(store, after) : [];
  const byNameA = new Map(a.map((entry) => [entry.path, entry]));
  const byNameB = new Map(b.map((entry) => [entry.path, entry]));
  for (const name of [...new Set([...byNameA.keys(), ...byNameB.keys()])].toSorted()) {
    const x = byNameA.get(name);
    const y = byNameB.get(name);
    if (x?.oid === y?.oid && x?.type === y?.type) continue;
    const xTree = x?.type === "tree" ? x.oid : undefined;
    const yTree = y?.type === "tree" ? y.oid : undefined;
    if (xTree || yTree) await diffTrees(store, xTree, yTree, max, `${prefix}${name}/`, out, blobs);
    if ((x && x.type !== "tree") || (y && y.type !== "tree")) out.push(`${prefix}${name}`);
    if (y?.type === "blob") blobs?.add(y.oid);
    if (out.length > max) return out;
  }
  return out;
}
