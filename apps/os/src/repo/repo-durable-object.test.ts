import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import { unwrapCoded, type Coded } from "../api/coded-result.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { REPO_BRANCH_CREATED, REPO_COMMIT_COMPLETED, REPO_CREATED } from "./repo-events.ts";
import { RepoStore } from "./repo-store.ts";

let counter = 0;
function freshName(path = "/repos/site"): string {
  counter += 1;
  return `prj_repo${Date.now()}${counter}:${path}`;
}

const actor = { principal: "tester", origin: "/" };

async function open<T>(answer: Promise<Coded<T>>): Promise<T> {
  return unwrapCoded(await answer);
}

async function freshRepo() {
  const name = freshName();
  const stub = env.REPO.getByName(name);
  await open(stub.create(actor));
  return { name, stub };
}

describe("a repository", () => {
  test("answers NOT_FOUND for everything until it is created; create is get-or-create", async () => {
    const stub = env.REPO.getByName(freshName());
    await expectCode(stub.describe().then(unwrapCoded), "NOT_FOUND");
    await expectCode(stub.commit({ message: "x", files: { a: "1" } }, actor).then(unwrapCoded), "NOT_FOUND");
    expect(await open(stub.create(actor))).toEqual({ created: true });
    expect(await open(stub.create(actor))).toEqual({ created: false });
    expect((await open(stub.describe())).defaultBranch).toBe("main");
  });

  test("seed creates the repository with a first commit in one call; a repeat answers the head it left", async () => {
    const name = freshName();
    const stub = env.REPO.getByName(name);
    const first = await open(stub.seed({ message: "seed", files: { "worker.ts": "export {};", "apps/home.ts": "export {};" } }, actor));
    expect(first.committed).toBe(true);
    expect(await open(stub.readFile({ ref: "main", path: "apps/home.ts" }))).toBe("export {};");
    // Another seed (a creation resumed after a crash) commits nothing and answers the head.
    expect(await open(stub.seed({ message: "seed", files: { "worker.ts": "other" } }, actor))).toEqual({ commit: first.commit, committed: false });
    expect(await open(stub.log({ ref: "main" }))).toHaveLength(1);
    // Its facts reach the repository's stream in order, delivered once.
    const types = (await streamStub(env.STREAM, name).getEvents({ afterOffset: 0, limit: 10 })).map((event) => event.type);
    expect(types).toEqual([REPO_CREATED, REPO_BRANCH_CREATED, REPO_COMMIT_COMPLETED]);
  });

  test("commits files, reads them back, lists them with globs and logs the history", async () => {
    const { stub } = await freshRepo();
    const first = await open(stub.commit({ branch: "main", message: "first", files: { "README.md": "# hi", "src/a.ts": "export const a = 1;", "src/b.ts": "b", "src/deep/c.json": "{}" } }, actor));
    expect(first.parents).toEqual([]);
    expect(first.changedPaths.toSorted()).toEqual(["README.md", "src/a.ts", "src/b.ts", "src/deep/c.json"]);
    const second = await open(stub.commit({ message: "second", files: { "src/b.ts": null, "src/a.ts": "export const a = 2;", "README.md": "# hi" }, expectedHead: first.commit }, actor));
    expect(second.parents).toEqual([first.commit]);
    // Identical bytes are no change; the delete and the edit are.
    expect(second.changedPaths.toSorted()).toEqual(["src/a.ts", "src/b.ts"]);
    expect(await open(stub.readFile({ path: "src/a.ts" }))).toBe("export const a = 2;");
    expect(await open(stub.readFile({ ref: first.commit, path: "src/a.ts" }))).toBe("export const a = 1;");
    await expectCode(stub.readFile({ path: "src/b.ts" }).then(unwrapCoded), "NOT_FOUND");
    expect(await open(stub.listFiles({}))).toEqual(["README.md", "src/a.ts", "src/deep/c.json"]);
    expect(await open(stub.listFiles({ include: ["src/**"], exclude: "**/*.json" }))).toEqual(["src/a.ts"]);
    expect(await open(stub.listFiles({ include: "*.md" }))).toEqual(["README.md"]);
    const log = await open(stub.log({ limit: 10 }));
    expect(log.map((entry) => entry.message)).toEqual(["second", "first"]);
    expect(log[0]?.author).toBe("tester");
  });

  test("keeps binary files byte for byte", async () => {
    const { stub } = await freshRepo();
    const bytes = new Uint8Array([0, 255, 1, 254, 128]);
    await open(stub.commit({ message: "bin", files: { "logo.bin": bytes } }, actor));
    expect(await open(stub.readFile({ path: "logo.bin", encoding: "binary" }))).toEqual(bytes);
    await expectCode(stub.readFile({ path: "logo.bin" }).then(unwrapCoded), "INVALID_ARGUMENT");
    const snap = await open(stub.snapshot({ branch: "main" }, {}));
    expect(snap.files["logo.bin"]).toEqual(bytes);
  });

  test("a stale expectedHead is OFFSET_CONFLICT and changes nothing", async () => {
    const { stub } = await freshRepo();
    const first = await open(stub.commit({ message: "one", files: { a: "1" } }, actor));
    await open(stub.commit({ message: "two", files: { a: "2" } }, actor));
    await expectCode(stub.commit({ message: "late", files: { a: "3" }, expectedHead: first.commit }, actor).then(unwrapCoded), "OFFSET_CONFLICT");
    await expectCode(stub.commit({ branch: "main", message: "new?", files: { a: "3" }, expectedHead: null }, actor).then(unwrapCoded), "OFFSET_CONFLICT");
    expect(await open(stub.readFile({ path: "a" }))).toBe("2");
    expect((await open(stub.log({}))).length).toBe(2);
  });

  test("branches: create from a ref, commit on it, delete it; the default branch stays", async () => {
    const { stub } = await freshRepo();
    const base = await open(stub.commit({ message: "base", files: { a: "1" } }, actor));
    expect(await open(stub.createBranch({ name: "feature/x" }, actor))).toEqual({ name: "feature/x", head: base.commit });
    await expectCode(stub.createBranch({ name: "feature/x" }, actor).then(unwrapCoded), "OFFSET_CONFLICT");
    await open(stub.commit({ branch: "feature/x", message: "on x", files: { b: "2" } }, actor));
    expect(await open(stub.listFiles({ ref: "feature/x" }))).toEqual(["a", "b"]);
    expect(await open(stub.listFiles({ ref: "main" }))).toEqual(["a"]);
    expect((await open(stub.branches())).map((branch) => branch.name)).toEqual(["feature/x", "main"]);
    await open(stub.deleteBranch({ name: "feature/x" }, actor));
    await expectCode(stub.deleteBranch({ name: "main" }, actor).then(unwrapCoded), "INVALID_ARGUMENT");
    expect((await open(stub.branches())).map((branch) => branch.name)).toEqual(["main"]);
  });

  test("snapshot of a branch follows its head; of a commit stays put", async () => {
    const { stub } = await freshRepo();
    const one = await open(stub.commit({ message: "one", files: { "src/index.ts": "1", "docs/x.md": "d" } }, actor));
    await open(stub.commit({ message: "two", files: { "src/index.ts": "2" } }, actor));
    expect((await open(stub.snapshot({ branch: "main" }, { include: "src/**" }))).files).toEqual({ "src/index.ts": "2" });
    const pinned = await open(stub.snapshot({ commit: one.commit }, {}));
    expect(pinned).toEqual({ commit: one.commit, files: { "src/index.ts": "1", "docs/x.md": "d" } });
  });

  test("a push that moves a branch onto commits the repository already holds announces the move: its tip, with what it changes on the branch", async () => {
    const { name, stub } = await freshRepo();
    const base = await open(stub.commit({ message: "base", files: { a: "1" } }, actor));
    await open(stub.createBranch({ name: "feature" }, actor));
    await open(stub.commit({ branch: "feature", message: "x1", files: { b: "2" } }, actor));
    const tip = await open(stub.commit({ branch: "feature", message: "x2", files: { c: "3" } }, actor));
    const before = await streamStub(env.STREAM, name).head();
    // `git push origin feature:main`: no pack, main fast-forwards to feature's head.
    const statuses = await open(stub.receivePack({ commands: [{ from: base.commit, to: tip.commit, ref: "refs/heads/main" }], pack: null }, actor));
    expect(statuses).toEqual([{ ref: "refs/heads/main" }]);
    expect((await open(stub.branches())).find((branch) => branch.name === "main")?.head).toBe(tip.commit);
    const moved = await streamStub(env.STREAM, name).getEvents({ afterOffset: before, limit: 50 });
    expect(moved.map((event) => event.type)).toEqual([REPO_COMMIT_COMPLETED]);
    expect(moved[0]?.payload).toEqual({ branch: "main", commit: tip.commit, parents: tip.parents, author: "tester", message: "x2", changedPaths: ["b", "c"] });
    // The same push again moves nothing and announces nothing.
    const again = await open(stub.receivePack({ commands: [{ from: tip.commit, to: tip.commit, ref: "refs/heads/main" }], pack: null }, actor));
    expect(again).toEqual([{ ref: "refs/heads/main" }]);
    expect(await streamStub(env.STREAM, name).head()).toBe(before + 1);
  });

  test("its facts are on the stream at its path, written by the platform", async () => {
    const { name, stub } = await freshRepo();
    const commit = await open(stub.commit({ message: "hello", files: { "a.txt": "a" } }, actor));
    const events = await streamStub(env.STREAM, name).getEvents({ afterOffset: 0, limit: 50 });
    expect(events.map((event) => event.type)).toEqual([REPO_CREATED, REPO_BRANCH_CREATED, REPO_COMMIT_COMPLETED]);
    const completed = events[2];
    expect(completed?.source.platform).toBe("repo");
    expect(completed?.payload).toEqual({ branch: "main", commit: commit.commit, parents: [], author: "tester", message: "hello", changedPaths: ["a.txt"] });
  });
});

describe("concurrent changes", () => {
  test("commits sent at once all land, each on the head the previous one left", async () => {
    const { stub } = await freshRepo();
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => open(stub.commit({ message: `c${i}`, files: { [`f${i}.txt`]: `${i}` } }, actor))));
    expect((await open(stub.listFiles({}))).length).toBe(8);
    const log = await open(stub.log({ limit: 20 }));
    expect(log.length).toBe(8);
    expect(new Set(answers.map((answer) => answer.commit))).toEqual(new Set(log.map((entry) => entry.commit)));
  });
});

describe("durability", () => {
  test("a restart loses nothing: a fresh store over the same SQLite sees every object and ref", async () => {
    const { stub } = await freshRepo();
    const commit = await open(stub.commit({ message: "keep", files: { "a/b/c.txt": "durable" } }, actor));
    await runInDurableObject(stub, async (_instance, state) => {
      const store = new RepoStore(state.storage);
      expect(store.refs.get("refs/heads/main")).toBe(commit.commit);
      expect(new TextDecoder().decode(await store.readFile("main", "a/b/c.txt"))).toBe("durable");
    });
    await runInDurableObject(stub, (_instance, state) => state.abort("restart")).catch(() => undefined);
    expect(await open(env.REPO.get(stub.id).readFile({ path: "a/b/c.txt" }))).toBe("durable");
  });

  test("stopped between writing objects and moving the ref, the branch keeps its old head and works on", async () => {
    const { stub } = await freshRepo();
    const before = await open(stub.commit({ message: "before", files: { f: "old" } }, actor));
    await runInDurableObject(stub, async (_instance, state) => {
      const store = new RepoStore(state.storage);
      store.beforeRefMove = () => {
        throw new Error("simulated crash mid-push");
      };
      await expect(store.commit({ branch: "main", message: "lost", files: new Map([["f", new TextEncoder().encode("new")]]) }, actor)).rejects.toThrow("simulated crash");
    });
    await runInDurableObject(stub, (_instance, state) => state.abort("restart")).catch(() => undefined);
    const again = env.REPO.get(stub.id);
    expect((await open(again.branches()))[0]?.head).toBe(before.commit);
    expect(await open(again.readFile({ path: "f" }))).toBe("old");
    const after = await open(again.commit({ message: "after", files: { f: "newer" }, expectedHead: before.commit }, actor));
    expect(after.parents).toEqual([before.commit]);
  });
});
