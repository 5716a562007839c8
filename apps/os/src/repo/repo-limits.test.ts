import { env } from "cloudflare:workers";
import { afterEach, describe, expect, test } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import { unwrapCoded, type Coded } from "../api/coded-result.ts";
import { LIMITS } from "../limits.ts";

let counter = 0;
const actor = { principal: "tester", origin: "/" };

async function open<T>(answer: Promise<Coded<T>>): Promise<T> {
  return unwrapCoded(await answer);
}

async function freshRepo() {
  counter += 1;
  const stub = env.REPO.getByName(`prj_limits${Date.now()}${counter}:/repos/limits`);
  await open(stub.create(actor));
  const base = await open(stub.commit({ message: "base", files: { "keep.txt": "kept" } }, actor));
  return { stub, base };
}

// Some limits are too large to cross quickly; these tests lower them for one test. The Durable
// Objects run in this isolate, so they read the same LIMITS object.
const saved = { ...LIMITS };
function lower(name: keyof typeof LIMITS, value: number): void {
  (LIMITS as Record<string, number>)[name] = value;
}
afterEach(() => Object.assign(LIMITS, saved));

/** The refusal names its limit, and the repository is as it was. */
async function expectRefusedWhole(stub: Awaited<ReturnType<typeof freshRepo>>["stub"], head: string, answer: Promise<Coded<unknown>>, limit: string) {
  const sizeBefore = (await open(stub.describe())).sizeBytes;
  const error = await expectCode(answer.then(unwrapCoded), "INVALID_ARGUMENT");
  expect((error as { details?: { limit?: string } }).details?.limit).toBe(limit);
  const after = await open(stub.describe());
  expect(after.branches.find((branch) => branch.name === "main")?.head).toBe(head);
  expect(after.sizeBytes).toBe(sizeBefore);
  expect(await open(stub.listFiles({}))).toEqual(["keep.txt"]);
}

describe("repository limits", () => {
  test("REPO_FILE_MAX_BYTES: a file one byte over refuses the whole commit", async () => {
    const { stub, base } = await freshRepo();
    const files = { "ok.txt": "fine", "big.bin": new Uint8Array(LIMITS.REPO_FILE_MAX_BYTES + 1) };
    await expectRefusedWhole(stub, base.commit, stub.commit({ message: "big", files }, actor), "REPO_FILE_MAX_BYTES");
    // At the limit it is accepted.
    await open(stub.commit({ message: "at limit", files: { "big.bin": new Uint8Array(LIMITS.REPO_FILE_MAX_BYTES) } }, actor));
  });

  test("REPO_COMMIT_FILES_MAX: one file too many refuses the commit", async () => {
    const { stub, base } = await freshRepo();
    const files = Object.fromEntries(Array.from({ length: LIMITS.REPO_COMMIT_FILES_MAX + 1 }, (_, i) => [`f/${i}.txt`, "x"]));
    await expectRefusedWhole(stub, base.commit, stub.commit({ message: "many", files }, actor), "REPO_COMMIT_FILES_MAX");
  });

  test("REPO_SIZE_MAX_BYTES: a commit that would grow the repository past it keeps nothing", async () => {
    const { stub, base } = await freshRepo();
    const size = (await open(stub.describe())).sizeBytes;
    lower("REPO_SIZE_MAX_BYTES", size + 1000);
    const random = crypto.getRandomValues(new Uint8Array(5000)); // incompressible
    await expectRefusedWhole(stub, base.commit, stub.commit({ message: "grow", files: { "r.bin": random } }, actor), "REPO_SIZE_MAX_BYTES");
    await open(stub.commit({ message: "small", files: { "s.txt": "s" } }, actor));
  });

  test("REPO_FILE_PATH_MAX_LENGTH and path rules", async () => {
    const { stub, base } = await freshRepo();
    const long = `${"d/".repeat(LIMITS.REPO_FILE_PATH_MAX_LENGTH / 2)}x`;
    await expectRefusedWhole(stub, base.commit, stub.commit({ message: "long", files: { [long]: "x" } }, actor), "REPO_FILE_PATH_MAX_LENGTH");
    for (const bad of ["../escape", "a//b", "/abs", ".git/config", "a/./b", "nul\u0000"]) {
      await expectCode(stub.commit({ message: "bad", files: { [bad]: "x" } }, actor).then(unwrapCoded), "INVALID_ARGUMENT", bad);
    }
  });

  test("REPO_BRANCH_NAME_MAX_LENGTH and REPO_BRANCH_NAME_RULES", async () => {
    const { stub, base } = await freshRepo();
    await expectRefusedWhole(stub, base.commit, stub.createBranch({ name: "b".repeat(LIMITS.REPO_BRANCH_NAME_MAX_LENGTH + 1) }, actor), "REPO_BRANCH_NAME_MAX_LENGTH");
    for (const bad of ["-x", "a..b", "a/.hidden", "x.lock", "a b", "HEAD", "a/", "~x", "a:b"]) {
      await expectRefusedWhole(stub, base.commit, stub.createBranch({ name: bad }, actor), "REPO_BRANCH_NAME_RULES");
    }
    await open(stub.createBranch({ name: "b".repeat(LIMITS.REPO_BRANCH_NAME_MAX_LENGTH) }, actor));
  });

  test("REPO_BRANCHES_MAX: the branch past it is refused", async () => {
    const { stub } = await freshRepo();
    lower("REPO_BRANCHES_MAX", 3);
    await open(stub.createBranch({ name: "two" }, actor));
    await open(stub.createBranch({ name: "three" }, actor));
    const error = await expectCode(stub.createBranch({ name: "four" }, actor).then(unwrapCoded), "INVALID_ARGUMENT");
    expect((error as { details?: { limit?: string } }).details?.limit).toBe("REPO_BRANCHES_MAX");
    expect((await open(stub.branches())).length).toBe(3);
  });

  test("REPO_LOG_LIMIT_MAX", async () => {
    const { stub } = await freshRepo();
    const error = await expectCode(stub.log({ limit: LIMITS.REPO_LOG_LIMIT_MAX + 1 }).then(unwrapCoded), "INVALID_ARGUMENT");
    expect((error as { details?: { limit?: string } }).details?.limit).toBe("REPO_LOG_LIMIT_MAX");
    expect((await open(stub.log({ limit: LIMITS.REPO_LOG_LIMIT_MAX }))).length).toBe(1);
  });

  test("REPO_SNAPSHOT_MAX_BYTES: a snapshot past it is refused, a masked one passes", async () => {
    const { stub } = await freshRepo();
    await open(stub.commit({ message: "data", files: { "data/a.bin": new Uint8Array(3000), "src/x.ts": "x" } }, actor));
    lower("REPO_SNAPSHOT_MAX_BYTES", 2000);
    const error = await expectCode(stub.snapshot({ branch: "main" }, {}).then(unwrapCoded), "INVALID_ARGUMENT");
    expect((error as { details?: { limit?: string } }).details?.limit).toBe("REPO_SNAPSHOT_MAX_BYTES");
    expect((await open(stub.snapshot({ branch: "main" }, { exclude: "data/**" }))).files).toEqual({ "keep.txt": "kept", "src/x.ts": "x" });
  });

  test("REPO_PUSH_COMMITS_MAX: a pack adding too many commits moves no ref and keeps no object", async () => {
    const { stub: source } = await freshRepo();
    for (let i = 0; i < 3; i += 1) await open(source.commit({ message: `c${i}`, files: { [`n${i}`]: `${i}` } }, actor));
    const head = (await open(source.branches()))[0]?.head ?? "";
    const pack = new Uint8Array(await new Response((await open(source.uploadPack({ wants: [head], haves: [] }))).pack).arrayBuffer());
    counter += 1;
    const target = env.REPO.getByName(`prj_limits${Date.now()}${counter}:/repos/target`);
    await open(target.create(actor));
    lower("REPO_PUSH_COMMITS_MAX", 2);
    const statuses = await open(target.receivePack({ commands: [{ from: null, to: head, ref: "refs/heads/main" }], pack }, actor));
    expect(statuses[0]?.error).toContain("[INVALID_ARGUMENT]");
    expect(await open(target.branches())).toEqual([]);
    expect((await open(target.describe())).sizeBytes).toBe(0);
    Object.assign(LIMITS, saved);
    const accepted = await open(target.receivePack({ commands: [{ from: null, to: head, ref: "refs/heads/main" }], pack }, actor));
    expect(accepted).toEqual([{ ref: "refs/heads/main" }]);
    expect((await open(target.log({}))).length).toBe(4);
  });
});
