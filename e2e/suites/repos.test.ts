import { execFile } from "node:child_process";
import { randomFillSync } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import type { RepoCommit, StreamEvent, WorkerRef } from "iterate/types";
import { mounted, test } from "../harness/fixtures.ts";
import { target } from "../harness/os.ts";
import { newProject } from "../harness/projects.ts";

const run = promisify(execFile);
const COMMIT_COMPLETED = "events.iterate.com/repo/commit-completed";
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "iterate-repos-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** The real git binary, isolated from the machine's config, never prompting. */
async function git(cwd: string, ...args: string[]): Promise<string> {
  const env = { PATH: process.env.PATH ?? "", HOME: work, GIT_TERMINAL_PROMPT: "0", GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_NAME: "Dev", GIT_AUTHOR_EMAIL: "dev@example.com", GIT_COMMITTER_NAME: "Dev", GIT_COMMITTER_EMAIL: "dev@example.com" };
  const { stdout } = await run("git", ["-c", "init.defaultBranch=main", "-c", "protocol.version=2", ...args], { cwd, env, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** git's failure output (it must fail). */
async function gitFails(cwd: string, ...args: string[]): Promise<string> {
  try {
    await git(cwd, ...args);
  } catch (error) {
    return String((error as { stderr?: string }).stderr);
  }
  throw new Error(`git ${args.join(" ")} succeeded`);
}

function remote(slug: string, path: string, user: string, password: string): string {
  const url = new URL(target().baseUrl);
  url.username = user;
  url.password = encodeURIComponent(password);
  url.pathname = `/git/${slug}${path}.git`;
  return url.toString();
}

/** One git pkt-line (ASCII text). */
function pktLine(text: string): string {
  return `${(text.length + 4).toString(16).padStart(4, "0")}${text}`;
}

function adminRemote(slug: string, path: string): string {
  return remote(slug, path, "admin", target().adminSecret);
}

/** Bytes no compression shrinks. */
function randomBytes(size: number): Uint8Array {
  return new Uint8Array(randomFillSync(new Uint8Array(size)));
}

async function dir(name: string): Promise<string> {
  return mkdtemp(join(work, `${name}-`));
}

describe("repos through itx", () => {
  test("create is get-or-create; commit, read, list, log, branches and snapshot; facts on the repo's stream", async ({ project: { itx } }) => {
    // Every project is born with its config repository (projects.md).
    expect((await itx.repo.log({})).length).toBeGreaterThan(0);
    await expectCode(itx.repos.get("/repos/nope").readFile({ path: "a" }), "NOT_FOUND");
    await expectCode(itx.repos.create({ path: "/not-repos/x" }), "INVALID_ARGUMENT");
    const site = itx.repos.create({ path: "/repos/site" });
    const first = await site.commit({ branch: "main", message: "first", files: { "index.html": "<h1>hi</h1>", "src/app.ts": "export {}" } });
    expect(first.changedPaths.toSorted()).toEqual(["index.html", "src/app.ts"]);
    await itx.repos.create({ path: "/repos/site" }); // again: nothing changes
    const same = itx.repos.get("/repos/site");
    expect(await same.readFile({ ref: "main", path: "index.html" })).toBe("<h1>hi</h1>");
    expect(await same.listFiles({ ref: "main", include: "src/**" })).toEqual(["src/app.ts"]);
    await expectCode(same.commit({ message: "stale", files: { a: "1" }, expectedHead: "0".repeat(40) }), "OFFSET_CONFLICT");
    const second = await same.commit({ message: "second", files: { "index.html": null }, expectedHead: first.commit });
    expect((await same.log({ ref: "main", limit: 5 })).map((entry) => entry.commit)).toEqual([second.commit, first.commit]);
    await same.createBranch({ name: "draft", from: first.commit });
    expect((await same.branches()).map((branch) => branch.name)).toEqual(["draft", "main"]);
    expect((await same.snapshot({ branch: "draft" }, { exclude: "src/**" })).files).toEqual({ "index.html": "<h1>hi</h1>" });
    await same.deleteBranch({ name: "draft" });
    expect((await itx.repos.list()).map((row) => row.path)).toEqual(["/repos/config", "/repos/site"]);
    const description = await same.__describe();
    expect(description).toMatchObject({ kind: "repo", path: "/repos/site", defaultBranch: "main" });
    const stream = await itx.streams.get("/repos/site");
    const facts = commits(await stream.getEvents({ afterOffset: 0, limit: 100 }));
    expect(facts.map((event) => event.payload.message)).toEqual(["first", "second"]);
    // Nobody else may write the repo's facts.
    await expectCode(stream.append({ type: COMMIT_COMPLETED, payload: { branch: "main" } }), "PERMISSION_DENIED");
  });

  test("only the root changes the config repository: its code is the project worker, which acts as the root", async ({ project: { itx } }) => {
    const child = itx.extend({ name: "helper" });
    const config = child.repos.get("/repos/config");
    await expectCode(child.repo.commit({ message: "take over", files: { "worker.ts": "export default {}" } }), "PERMISSION_DENIED");
    await expectCode(config.commit({ message: "take over", files: { "worker.ts": "export default {}" } }), "PERMISSION_DENIED");
    await expectCode(config.createBranch({ name: "mine" }), "PERMISSION_DENIED");
    await expectCode(config.deleteBranch({ name: "main" }), "PERMISSION_DENIED");
    // A script acting as that context is refused the same way; it still reads the repository.
    const attempt = await expectCode(child.run(`async (itx) => itx.repo.commit({ message: "take over", files: { "worker.ts": "export default {}" } })`), "SCRIPT_FAILED");
    expect(attempt.message).toMatch(/PERMISSION_DENIED/);
    expect((await config.log({ limit: 1 })).length).toBe(1);
    // Its own repositories it changes as before, and the root changes the config repository.
    const own = await child.repos.create({ path: "/repos/helper-notes" });
    expect((await own.commit({ message: "note", files: { "a.md": "hi" } })).changedPaths).toEqual(["a.md"]);
    await itx.repo.createBranch({ name: "rooted" });
    await itx.repo.deleteBranch({ name: "rooted" });
  });

  test("session.repos is the admin's deployment-wide collection; others find nothing", async ({ os, admin, project: { projectId }, connect }) => {
    const path = `/repos/ops-${Date.now().toString(36)}`;
    await admin.repos.create({ path }).commit({ message: "ops", files: { "a.txt": "a" } });
    expect(await admin.repos.get(path).readFile({ path: "a.txt" })).toBe("a");
    const alice = connect({ auth: { type: "impersonate", secret: os.adminSecret, principal: "alice", projectIds: [projectId] } });
    await expectCode(alice.repos.get(path).readFile({ path: "a.txt" }), "NOT_FOUND");
  });
});

describe("repos through stock git", () => {
  test("clone, commit, push, pull from a second clone; the push lands repo/commit-completed", async ({ os, project: { slug }, connect }) => {
    const itx = connect({ auth: os.admin, projectId: slug });
    await itx.repos.create({ path: "/repos/site" }).commit({ message: "seed", files: { "README.md": "# site\n" } });

    const one = await dir("one");
    await git(one, "clone", adminRemote(slug, "/repos/site"), ".");
    expect(await readFile(join(one, "README.md"), "utf8")).toBe("# site\n");
    await writeFile(join(one, "README.md"), "# site, edited\n");
    await writeFile(join(one, "new.txt"), "new file\n");
    await git(one, "add", "-A");
    await git(one, "commit", "-m", "edit from git");
    await git(one, "push", "origin", "main");
    const pushedHead = (await git(one, "rev-parse", "HEAD")).trim();

    const repo = itx.repos.get("/repos/site");
    expect(await repo.readFile({ path: "new.txt" })).toBe("new file\n");
    expect((await repo.branches())[0]?.head).toBe(pushedHead);
    const stream = await itx.streams.get("/repos/site");
    const facts = commits(await stream.getEvents({ afterOffset: 0, limit: 100 }));
    expect(facts.at(-1)?.payload).toMatchObject({ branch: "main", commit: pushedHead, message: "edit from git", author: "Dev", changedPaths: ["README.md", "new.txt"] });

    // An API commit, then a second clone's pull sees both.
    await repo.commit({ message: "from itx", files: { "api.txt": "api\n" } });
    const two = await dir("two");
    await git(two, "clone", adminRemote(slug, "/repos/site"), ".");
    expect(await readFile(join(two, "api.txt"), "utf8")).toBe("api\n");
    await git(one, "pull", "--ff-only", "origin", "main");
    expect(await readFile(join(one, "api.txt"), "utf8")).toBe("api\n");

    // Both clones commit; the second push is not a fast-forward and is refused.
    await writeFile(join(one, "a.txt"), "one\n");
    await git(one, "add", "-A");
    await git(one, "commit", "-m", "one wins");
    await git(one, "push", "origin", "main");
    await writeFile(join(two, "a.txt"), "two\n");
    await git(two, "add", "-A");
    await git(two, "commit", "-m", "two loses");
    const refused = await gitFails(two, "push", "origin", "main");
    expect(refused).toMatch(/rejected/);
    expect(await repo.readFile({ path: "a.txt" })).toBe("one\n");
    // Forcing it is refused by the server too: history is never rewritten.
    const forced = await gitFails(two, "push", "--force", "origin", "main");
    expect(forced).toMatch(/non-fast-forward/);
    // After a pull (a merge) the push goes through.
    await git(two, "pull", "--no-rebase", "-X", "ours", "origin", "main");
    await git(two, "push", "origin", "main");
    expect(await repo.readFile({ path: "a.txt" })).toBe("two\n");
  });

  test("a repository larger than one RPC value: pushed in parts, cloned whole, deltas across pushes read back; one push past GIT_HTTP_BODY_MAX_BYTES is refused", { timeout: 300_000 }, async ({ os, project: { slug }, connect }) => {
    const itx = connect({ auth: os.admin, projectId: slug });
    await itx.repos.create({ path: "/repos/large" });
    const one = await dir("large");
    await git(one, "clone", adminRemote(slug, "/repos/large"), ".");
    // Incompressible files, 20 MB a push: two pushes hold more than workerd's 32 MiB RPC value.
    const commitRandom = async (names: string[], message: string) => {
      for (const name of names) await writeFile(join(one, name), randomBytes(4_000_000));
      await git(one, "add", "-A");
      await git(one, "commit", "-q", "-m", message);
    };
    await commitRandom(["r0", "r1", "r2", "r3", "r4"], "first half");
    await git(one, "push", "-q", "origin", "main");
    await commitRandom(["r5", "r6", "r7", "r8", "r9"], "second half");
    await git(one, "push", "-q", "origin", "main");
    // A text file, then a one-line edit of it: git pushes the edit as a delta on the stored blob.
    const text = Array.from({ length: 5_000 }, (_, i) => `line ${i} of a file git stores as deltas\n`);
    await writeFile(join(one, "notes.txt"), text.join(""));
    await git(one, "add", "-A");
    await git(one, "commit", "-q", "-m", "notes");
    await git(one, "push", "-q", "origin", "main");
    text[2_500] = "the line that changed\n";
    await writeFile(join(one, "notes.txt"), text.join(""));
    await git(one, "commit", "-q", "-am", "edit notes");
    await git(one, "push", "-q", "origin", "main");
    const head = (await git(one, "rev-parse", "HEAD")).trim();
    const repo = itx.repos.get("/repos/large");
    expect((await repo.__describe()).sizeBytes).toBeGreaterThan(40_000_000);
    expect(await repo.readFile({ path: "notes.txt" })).toBe(text.join(""));

    // The clone's pack (over 40 MB) is streamed from the repository's Durable Object.
    const two = await dir("large-clone");
    await git(two, "clone", "-q", adminRemote(slug, "/repos/large"), ".");
    expect((await git(two, "rev-parse", "HEAD")).trim()).toBe(head);
    await git(two, "fsck", "--full", "--strict");
    for (const name of ["r0", "r5", "r9", "notes.txt"]) expect(await readFile(join(two, name))).toEqual(await readFile(join(one, name)));

    // 36 MB in one push is past the limit (31 MiB): refused, and the branch stays where it was. git
    // streams a large body and reads no answer before it has sent it all, so the OS reads the rest
    // before it answers: git prints the refusal rather than a broken pipe.
    await commitRandom(["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"], "too much at once");
    const refused = await gitFails(one, "push", "origin", "main");
    expect(refused).toContain("remote unpack failed: [INVALID_ARGUMENT] a push is at most 32505856 bytes (GIT_HTTP_BODY_MAX_BYTES)");
    expect(refused).toMatch(/\[remote rejected\] main -> main \(\[INVALID_ARGUMENT\] a push is at most/);
    expect((await repo.branches()).find((branch) => branch.name === "main")?.head).toBe(head);
  });

  test("an empty repository clones; a first push and a new branch land; a branch is deleted by push", async ({ os, project: { slug }, connect }) => {
    const itx = connect({ auth: os.admin, projectId: slug });
    await itx.repos.create({ path: "/repos/blank" });
    const one = await dir("blank");
    await git(one, "clone", adminRemote(slug, "/repos/blank"), ".");
    await writeFile(join(one, "x.txt"), "x\n");
    await git(one, "add", "-A");
    await git(one, "commit", "-m", "first");
    await git(one, "push", "origin", "main");
    await git(one, "push", "origin", "main:feature/one");
    const repo = itx.repos.get("/repos/blank");
    expect((await repo.branches()).map((branch) => branch.name)).toEqual(["feature/one", "main"]);
    await git(one, "push", "origin", "--delete", "feature/one");
    expect((await repo.branches()).map((branch) => branch.name)).toEqual(["main"]);
  });

  test("a token for project A cannot clone project B's repository (it looks missing); bad credentials are refused", async ({ os, admin: session, project: a, connect }) => {
    const { baseUrl, admin } = os;
    const b = await newProject("repos-b");
    const itxB = connect({ auth: admin, projectId: b.slug });
    await itxB.repos.create({ path: "/repos/secret" }).commit({ message: "b", files: { "b.txt": "b" } });
    const itxA = connect({ auth: admin, projectId: a.slug });
    await itxA.repos.create({ path: "/repos/mine" }).commit({ message: "a", files: { "a.txt": "a" } });
    const { token } = await session.issueToken({ principal: "dev-a", projectIds: [a.slug], ttlSeconds: 600 });

    await git(await dir("a-ok"), "clone", remote(a.slug, "/repos/mine", "token", token), ".");
    const forbidden = await gitFails(await dir("a-b"), "clone", remote(b.slug, "/repos/secret", "token", token), ".");
    const absent = await gitFails(await dir("a-none"), "clone", remote(a.slug, "/repos/absent", "token", token), ".");
    expect(forbidden).toMatch(/not found/);
    expect(forbidden.replace(b.slug, "X").replace("/repos/secret", "/R")).toBe(absent.replace(a.slug, "X").replace("/repos/absent", "/R"));

    const wrong = await gitFails(await dir("bad"), "clone", remote(a.slug, "/repos/mine", "admin", "not-the-secret"), ".");
    expect(wrong).toMatch(/Authentication failed|could not read Username|401/);
    const garbage = await gitFails(await dir("bad2"), "clone", remote(a.slug, "/repos/mine", "token", "garbage"), ".");
    expect(garbage).toMatch(/Authentication failed|could not read Username|401/);
    // Without credentials: 401 asking for Basic, before anything is looked up.
    const bare = await fetch(`${baseUrl}/git/${a.slug}/repos/mine.git/info/refs?service=git-upload-pack`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get("www-authenticate")).toContain("Basic");
  });

  test("GIT_HTTP_BODY_MAX_BYTES and GIT_HTTP_NEGOTIATION_MAX_BYTES: oversized bodies are refused (a push naming its size, even when no command can be read)", async ({ os, project: { slug }, connect }) => {
    const { baseUrl, admin, adminSecret } = os;
    const itx = connect({ auth: admin, projectId: slug });
    await itx.repos.create({ path: "/repos/l" });
    const auth = `Basic ${btoa(`admin:${adminSecret}`)}`;
    const post = (service: string, length: number) =>
      fetch(`${baseUrl}/git/${slug}/repos/l.git/${service}`, {
        method: "POST",
        headers: { authorization: auth, "content-type": `application/x-${service}-request`, "content-length": String(length) },
        body: new Uint8Array(length),
      });
    const upload = await post("git-upload-pack", 1_048_577);
    expect(upload.status).toBe(400);
    expect(await upload.text()).toContain("larger than");
    const receive = await post("git-receive-pack", 32_505_857);
    expect(receive.status).toBe(400);
    expect(await receive.text()).toContain("a push is at most 32505856 bytes (GIT_HTTP_BODY_MAX_BYTES)");
  });

  test("GIT_HTTP_REF_UPDATES_MAX: a push naming one ref too many is refused and moves nothing", async ({ os, project: { slug }, connect }) => {
    const { baseUrl, admin, adminSecret } = os;
    const itx = connect({ auth: admin, projectId: slug });
    await itx.repos.create({ path: "/repos/r" });
    const zero = "0".repeat(40);
    const commands = Array.from({ length: 101 }, (_, i) => pktLine(`${zero} ${"a".repeat(40)} refs/heads/b${i}${i === 0 ? "\0report-status" : ""}\n`));
    const response = await fetch(`${baseUrl}/git/${slug}/repos/r.git/git-receive-pack`, {
      method: "POST",
      headers: { authorization: `Basic ${btoa(`admin:${adminSecret}`)}`, "content-type": "application/x-git-receive-pack-request" },
      body: `${commands.join("")}0000`,
    });
    // Refused as git expects, so git prints it: the unpack line, then every ref refused.
    expect(response.status).toBe(200);
    const report = await response.text();
    expect(report).toContain("unpack [INVALID_ARGUMENT] a push updates at most 100 refs (GIT_HTTP_REF_UPDATES_MAX)");
    expect(report.match(/ng refs\/heads\/b\d+ \[INVALID_ARGUMENT\]/g)).toHaveLength(101);
    expect(await itx.repos.get("/repos/r").branches()).toEqual([]);
  });
});

/** The repo's `repo/commit-completed` facts, typed as the contract's RepoCommit payload. */
function commits(events: StreamEvent[]): StreamEvent<string, RepoCommit>[] {
  return events.filter((event): event is StreamEvent<string, RepoCommit> => event.type === COMMIT_COMPLETED);
}

/** What the worker below exposes: `itx.workers.get` cannot know a loaded worker's methods. */
interface Versioned {
  version(): string;
}

function worker(version: string): string {
  return `import { WorkerEntrypoint } from "cloudflare:workers";
import { label } from "./label";
export default class Main extends WorkerEntrypoint { version(): string { return label("${version}"); } }`;
}

describe("dynamic workers from a repository", () => {

  test("a branch is late-bound (the next load after a commit runs it); a commit stays pinned", { timeout: 180_000 }, async ({ project: { itx } }) => {
    const load = (ref: WorkerRef) => mounted<Versioned>(itx.workers.get(ref));
    const repo = itx.repos.create({ path: "/repos/app" });
    const first = await repo.commit({
      message: "v1",
      files: { "src/index.ts": worker("v1"), "src/label.ts": "export const label = (v: string) => `app ${v}`;", "docs/notes.bin": new Uint8Array([0, 159, 146, 150]) },
    });
    const byBranch: WorkerRef = { source: { repo: "/repos/app", branch: "main", include: "src/**" } };
    const pinned: WorkerRef = { source: { repo: "/repos/app", commit: first.commit, exclude: "docs/**", entryPoint: "src/index.ts" } };
    expect(await load(byBranch).version()).toBe("app v1");
    expect(await load(pinned).version()).toBe("app v1");
    await repo.commit({ message: "v2", files: { "src/index.ts": worker("v2") } });
    expect(await load(byBranch).version()).toBe("app v2");
    expect(await load(pinned).version()).toBe("app v1");
    // A binary file left in is refused by name; a missing repository or commit is NOT_FOUND.
    await expectCode(load({ source: { repo: "/repos/app", branch: "main" } }).version(), "INVALID_ARGUMENT");
    await expectCode(load({ source: { repo: "/repos/none", branch: "main" } }).version(), "NOT_FOUND");
    await expectCode(load({ source: { repo: "/repos/app", commit: "f".repeat(40) } }).version(), "NOT_FOUND");
    // Deliberately malformed: a branch and a commit at once, which the contract's type refuses.
    await expectCode(load({ source: { repo: "/repos/app", branch: "main", commit: first.commit } } as unknown as WorkerRef).version(), "INVALID_ARGUMENT");
  });
});
