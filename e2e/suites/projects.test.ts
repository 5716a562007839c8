import { execFile } from "node:child_process";
import { request } from "node:http";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { StreamEvent } from "iterate/types";
import { test } from "../harness/fixtures.ts";
import { target } from "../harness/os.ts";
import { until } from "../harness/poll.ts";

const run = promisify(execFile);
const E = "events.iterate.com/";
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "iterate-projects-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const uniqueSlug = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

/**
 * GET `/` on the project's host, `<slug>.localhost` at the OS's port. curl and browsers resolve
 * `*.localhost` to loopback; Node's fetch will not send a Host of our choosing, so node:http does.
 */
function homepage(slug: string): Promise<{ status: number; text: string }> {
  const base = new URL(target().baseUrl);
  return new Promise((resolve, reject) => {
    const sent = request({ host: "127.0.0.1", port: base.port, path: "/", headers: { host: `${slug}.localhost:${base.port}` } }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
    });
    sent.on("error", reject);
    sent.end();
  });
}

/** A `project/worker-updated` or `project/worker-update-failed` fact, as far as this suite reads it. */
type WorkerFact = StreamEvent<string, { commit: string; error?: string }>;

/** A config worker whose homepage says `text` and the project's slug. */
const worker = (text: string) =>
  `import { IterateConfigEntrypoint } from "iterate/sdk";\nexport default class extends IterateConfigEntrypoint {\n  async fetch() { return new Response(${JSON.stringify(text)} + " " + this.projectSlug()); }\n}\n`;

async function git(cwd: string, ...args: string[]): Promise<string> {
  const env = { PATH: process.env.PATH ?? "", HOME: work, GIT_TERMINAL_PROMPT: "0", GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_NAME: "Dev", GIT_AUTHOR_EMAIL: "dev@example.com", GIT_COMMITTER_NAME: "Dev", GIT_COMMITTER_EMAIL: "dev@example.com" };
  const { stdout } = await run("git", ["-c", "init.defaultBranch=main", ...args], { cwd, env });
  return stdout;
}

describe("projects program themselves", () => {
  test("creation shows each step on the root stream; the homepage answers; the onboarding agent exists", async ({ admin: session }) => {
    const slug = uniqueSlug("lifecycle");
    const root = session.projects.get(slug);
    expect(await root.create({ waitUntilCreated: false })).toEqual({ created: false });
    const created = await root.waitForEvent({ type: `${E}project/created`, timeoutMs: 30_000 });
    await root.waitForEvent({ type: `${E}project/worker-updated`, afterOffset: created.offset - 1, timeoutMs: 30_000 });
    const types = (await root.getEvents({ limit: 500 })).map((event) => event.type).filter((type) => type.startsWith(`${E}project/`));
    expect(types.slice(0, 7)).toEqual([
      `${E}project/create-requested`,
      `${E}project/create-attempt-started`,
      `${E}project/config-repo-seeded`,
      `${E}project/worker-probed`,
      `${E}project/worker-feed-installed`,
      `${E}project/created`,
      `${E}project/worker-updated`,
    ]);
    expect(await homepage(slug)).toMatchObject({ status: 200, text: expect.stringContaining(`Homepage of ${slug}`) });
    // Builds of changed workers take seconds, the first one longer.
    const agents = await until(() => root.agents.list(), (list) => list.length > 0, { timeoutMs: 30_000, intervalMs: 250 });
    expect(agents.map((agent) => agent.path)).toContain("/agents/onboarding");
    const heartbeat = await until(() => root.scheduler.list(), (list) => list.length > 0, { timeoutMs: 30_000, intervalMs: 250 });
    expect(heartbeat[0]).toMatchObject({ key: "heartbeat", every: 900 });
  });

  test("an unknown project's host is 404; creating again is a no-op that waits", async ({ admin: session }) => {
    expect((await homepage(uniqueSlug("nobody"))).status).toBe(404);
    const slug = uniqueSlug("twice");
    const root = session.projects.get(slug);
    await root.create();
    expect(await root.create()).toEqual({ created: true });
    const created = (await root.getEvents({ limit: 500 })).filter((event) => event.type === `${E}project/created`);
    expect(created).toHaveLength(1);
  });

  test("a commit through itx and a git push change the homepage; a broken worker fails while the old one answers", async ({ os, admin: session, connect }) => {
    const slug = uniqueSlug("edits");
    await session.projects.create({ slug });
    const { baseUrl, admin } = os;
    const itx = connect({ auth: admin, projectId: slug });

    const before = await itx.waitForEvent({ type: `${E}project/worker-updated`, timeoutMs: 30_000 });
    const viaItx = await itx.repo.commit({ message: "via itx", files: { "worker.ts": worker("Edited through itx:") } });
    const updated = (await itx.waitForEvent({ type: `${E}project/worker-updated`, afterOffset: before.offset, payload: { commit: viaItx.commit }, timeoutMs: 120_000 })) as WorkerFact;
    expect(updated.payload.commit).toBe(viaItx.commit);
    expect(await homepage(slug)).toEqual({ status: 200, text: `Edited through itx: ${slug}` });

    const remote = new URL(baseUrl);
    remote.username = "admin";
    remote.password = encodeURIComponent(os.adminSecret);
    remote.pathname = `/git/${slug}/repos/config.git`;
    const clone = await mkdtemp(join(work, "clone-"));
    await git(clone, "clone", remote.toString(), ".");
    expect(await readFile(join(clone, "AGENTS.md"), "utf8")).toContain("How to change this project");
    await writeFile(join(clone, "worker.ts"), worker("Pushed with git:"));
    await git(clone, "commit", "-am", "via git push");
    await git(clone, "push", "origin", "main");
    const pushed = (await git(clone, "rev-parse", "HEAD")).trim();
    await itx.waitForEvent({ type: `${E}project/worker-updated`, payload: { commit: pushed }, timeoutMs: 120_000 });
    expect(await homepage(slug)).toEqual({ status: 200, text: `Pushed with git: ${slug}` });

    const broken = await itx.repo.commit({ message: "broken", files: { "worker.ts": "export default class { fetch( {" } });
    const failed = (await itx.waitForEvent({ type: `${E}project/worker-update-failed`, payload: { commit: broken.commit }, timeoutMs: 120_000 })) as WorkerFact;
    expect(failed.payload.error).toContain("worker.ts");
    expect(await homepage(slug)).toEqual({ status: 200, text: `Pushed with git: ${slug}` });
  }, 400_000);
});
