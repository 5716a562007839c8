import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Baselines } from "./baselines.ts";
import { startGitHttpPeer } from "./peer/git-http-backend.ts";
import { report, reportTail, summarize, time } from "./stats.ts";
import { openProject, type BenchTarget } from "./target.ts";

const run = promisify(execFile);
const FILES = 1_000;
const FILE_BYTES = 10_000;
const CLONES = 5;
const PUSHES = 5;
const PUSH_FILES = 100;
const ITX_CALLS = 200;

/**
 * Repositories (issue #14): stock `git clone` and `git push` against the OS and against git's own
 * `git http-backend` serving the same history on loopback, interleaved; then `commit()` and
 * `readFile` through itx beside baseline (c).
 */
export async function measureRepos(target: BenchTarget, baselines: Baselines): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), "iterate-bench-repos-"));
  const peerRoot = join(work, "peer");
  await mkdir(peerRoot);
  const peer = await startGitHttpPeer(peerRoot);
  const { projectId, itx } = await openProject(target, "bench-repos");
  const env = { PATH: process.env.PATH ?? "", HOME: work, GIT_TERMINAL_PROMPT: "0", GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_NAME: "bench", GIT_AUTHOR_EMAIL: "bench@example.com", GIT_COMMITTER_NAME: "bench", GIT_COMMITTER_EMAIL: "bench@example.com" };
  const git = (cwd: string, ...args: string[]) => run("git", ["-c", "init.defaultBranch=main", "-c", "protocol.version=2", ...args], { cwd, env, maxBuffer: 256 * 1024 * 1024 });
  try {
    // One history, pushed to both servers: 1,000 files of 10 kB of random text (~10 MB).
    const source = join(work, "source");
    await mkdir(source);
    await git(source, "init", "-q");
    for (let i = 0; i < FILES; i++) {
      await mkdir(join(source, `dir${i % 20}`), { recursive: true });
      await writeFile(join(source, `dir${i % 20}`, `file${i}.txt`), randomText(FILE_BYTES));
    }
    await git(source, "add", "-A");
    await git(source, "commit", "-q", "-m", "1,000 files");
    await git(peerRoot, "init", "-q", "--bare", "site.git");
    await git(join(peerRoot, "site.git"), "config", "http.receivepack", "true");
    await itx.repos.create({ path: "/repos/site" });
    const url = new URL(target.baseUrl);
    url.username = "admin";
    url.password = encodeURIComponent(target.adminSecret);
    url.pathname = `/git/${projectId}/repos/site.git`;
    const ours = url.toString();
    const theirs = `${peer.url}/site.git`;
    await git(source, "push", "-q", ours, "main");
    await git(source, "push", "-q", theirs, "main");

    // Clones, interleaved.
    const cloneOurs: number[] = [];
    const clonePeer: number[] = [];
    for (let i = 0; i < CLONES; i++) {
      cloneOurs.push(await time(() => git(work, "clone", "-q", ours, `ours-${i}`)));
      clonePeer.push(await time(() => git(work, "clone", "-q", theirs, `peer-${i}`)));
    }
    const co = summarize(cloneOurs).median;
    const cp = summarize(clonePeer).median;
    report("repos.clone_1000_files_10mb.median", co, "ms");
    reportTail("repos.clone_1000_files_10mb", summarize(cloneOurs));
    report("repos.clone_1000_files_10mb.peer_git_http_backend.median", cp, "ms");
    reportTail("repos.clone_1000_files_10mb.peer_git_http_backend", summarize(clonePeer));
    report("repos.clone_1000_files_10mb.ratio_to_peer", co / cp, `x (target <= 2: ${co / cp <= 2 ? "met" : "missed"})`);

    // Pushes of a commit changing 100 files, interleaved; each clone pushes onto its own server.
    const pushOurs: number[] = [];
    const pushPeer: number[] = [];
    for (let i = 0; i < PUSHES; i++) {
      for (const [dir, series] of [[join(work, "ours-0"), pushOurs], [join(work, "peer-0"), pushPeer]] as const) {
        for (let f = 0; f < PUSH_FILES; f++) await writeFile(join(dir, `dir${f % 20}`, `file${f}.txt`), randomText(FILE_BYTES));
        await git(dir, "commit", "-q", "-a", "-m", `push ${i}`);
        series.push(await time(() => git(dir, "push", "-q", "origin", "main")));
      }
    }
    const po = summarize(pushOurs).median;
    const pp = summarize(pushPeer).median;
    report("repos.push_100_files.median", po, "ms");
    reportTail("repos.push_100_files", summarize(pushOurs));
    report("repos.push_100_files.peer_git_http_backend.median", pp, "ms");
    reportTail("repos.push_100_files.peer_git_http_backend", summarize(pushPeer));
    report("repos.push_100_files.ratio_to_peer", po / pp, `x (target <= 2: ${po / pp <= 2 ? "met" : "missed"})`);

    // commit() of one small file and readFile through itx, on a small repository.
    const small = itx.repos.create({ path: "/repos/small" });
    await small.commit({ message: "seed", files: { "a.txt": "a" } });
    for (let i = 0; i < 20; i++) await small.readFile({ path: "a.txt" });
    const commits: number[] = [];
    const reads: number[] = [];
    for (let i = 0; i < ITX_CALLS; i++) {
      commits.push(await time(() => small.commit({ message: `c${i}`, files: { "a.txt": `v${i}` } })));
      reads.push(await time(() => small.readFile({ path: "a.txt" })));
    }
    const c = summarize(commits);
    const r = summarize(reads);
    report("repos.itx_commit_one_file.median", c.median, "ms");
    reportTail("repos.itx_commit_one_file", c);
    report("repos.itx_commit_one_file.ratio_to_c", c.median / baselines.doInsert, "x");
    report("repos.itx_read_file.median", r.median, "ms");
    reportTail("repos.itx_read_file", r);
    report("repos.itx_read_file.ratio_to_c", r.median / baselines.doInsert, "x");
  } finally {
    itx[Symbol.dispose]();
    await peer.close();
    await rm(work, { recursive: true, force: true });
  }
}

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 \n";

function randomText(bytes: number): string {
  const random = new Uint8Array(bytes);
  crypto.getRandomValues(random);
  let out = "";
  for (const byte of random) out += ALPHABET[byte % ALPHABET.length];
  return out;
}
