// The docs' self-contained scripts run: every fenced block of README.md and docs/ whose info string
// carries `run` (```js run) is run by Node 22 as a user would run it (a module file under e2e/, so
// `iterate/client` resolves), against the OS under test, with the environment the docs tell users
// to set: ITERATE_BASE_URL and ITERATE_ADMIN_SECRET, plus ITERATE_PROJECT_ID for a block that uses
// the prose's `itx`, `baseUrl`, `auth` or `projectId` (a fresh project per block), and
// ITERATE_MODEL_BASE_URL and ITERATE_MODEL naming a model on loopback for a block that makes an
// agent (docs/agents.md tells users to set them for their own model server). Each must exit 0
// with nothing on stderr; where the prose states a result, STATED checks it. The docs test in
// packages/iterate/scripts/docs-code-blocks.test.ts type-checks the same blocks.
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { Handle } from "iterate/client";
import type { ProjectRoot, Session } from "iterate/types";
import { blockName, blockRunner, runnableBlocks, type BlockRun } from "../harness/doc-blocks.ts";
import { test } from "../harness/fixtures.ts";
import { scriptReply, startModelServer, type ModelRequest } from "../harness/model-server.ts";

/**
 * The model the docs' agents ask: it answers a person's question with a script that says it back
 * through `itx.chat.sendMessage`, and the script's outcome with a script that ends the loop.
 */
function answer(request: ModelRequest): string {
  const last = request.messages.at(-1);
  if (last?.role !== "user" || last.content.startsWith("[")) return scriptReply("async (itx) => {}", "Done.");
  return scriptReply(`async (itx) => { await itx.chat.sendMessage(${JSON.stringify(`Hello from the loopback model; you asked: ${last.content}`)}); }`);
}
let model: Awaited<ReturnType<typeof startModelServer>>;
beforeAll(async () => {
  model = await startModelServer(answer);
});
afterAll(() => model.close());

interface Ran {
  run: BlockRun;
  project: Handle<ProjectRoot>;
  admin: Handle<Session>;
}

/** What the prose around a block says it does, by block name (file and first code line). */
const STATED: Record<string, (ran: Ran) => Promise<void>> = {
  'README.md: import { connectItx } from "iterate/client";': async ({ run }) => {
    // "{ kind: "session", principal: { kind: "admin", id: "admin" }, ... }", as Node prints it.
    expect(run.stdout).toContain("kind: 'session'");
    expect(run.stdout).toContain("principal: { kind: 'admin', id: 'admin' }");
  },
  'README.md: import { mounted } from "iterate/client";': async ({ run }) => {
    expect(run.stdout).toMatch(/^hello ada from pid \d+$/m);
  },
  'README.md: console.log(await itx.run("async (itx) => (await itx.whoami()).path")); // "/"': async ({ run }) => {
    expect(run.stdout.split("\n")[0]).toBe("/");
  },
  'README.md: await itx.scheduler.set({ key: "tick", every: 60, script: `async (itx) => { await itx.append({ type: "demo/ticked" }) }` });': async ({ run, project }) => {
    // "[{ key: "tick", every: 60, runCount, nextAt, ... }]", then cancelled.
    expect(run.stdout).toContain("key: 'tick'");
    expect(run.stdout).toContain("every: 60");
    expect((await project.scheduler.list()).map((schedule) => schedule.key)).not.toContain("tick");
  },
  'README.md: const stream = session.streams.get("/hello");': async ({ run }) => {
    expect(run.stdout).toContain("demo/greeted");
  },
  'docs/contexts-and-capabilities.md: import { mounted, type EventInput, type Stream, type StreamEvent } from "iterate/client";': async ({ project }) => {
    // "logged.log.append(e)" is "the same as" "logged.note(e)": both land on /log.
    const events = await project.streams.get("/log").getEvents({ afterOffset: 0 });
    expect(events.map((event) => event.type)).toEqual(["demo/noted", "demo/noted"]);
  },
  'docs/agents.md: const agent = itx.agents.get("/agents/greeter");': async ({ run }) => {
    // "what the agent said with itx.chat.sendMessage": the model got the question and its script spoke.
    expect(run.stdout.trim()).toBe("Hello from the loopback model; you asked: Say hello to ada in one sentence.");
    expect(model.requests.some((request) => request.model === "docs-model")).toBe(true);
  },
  'docs/repos.md: import { connectItx } from "iterate/client";': async ({ admin }) => {
    using site = admin.projects.get("hello-repos").repos.get("/repos/site");
    expect(await site.readFile({ path: "index.html" })).toBe("<h1>hello</h1>\n");
    expect((await site.log({ limit: 1 })).map((commit) => commit.message)).toEqual(["first page"]);
  },
};

const blocks = runnableBlocks();
const runner = blockRunner();
afterAll(() => runner.remove());

describe("the docs' runnable scripts", () => {
  test("README's first script and the guides' self-contained scripts are flagged run, and every stated result names one", () => {
    const names = blocks.map(blockName);
    expect(names.length).toBeGreaterThanOrEqual(3);
    expect(names.filter((name) => name.startsWith("README.md:")).length).toBeGreaterThanOrEqual(1);
    for (const name of Object.keys(STATED)) expect(names).toContain(name);
  });

  test.for(blocks.map((block) => [`${block.file}:${block.line}`, block] as const))("%s runs without error", { timeout: 90_000 }, async ([, block], { os, project, admin }) => {
    const run = await runner.run(block, { ITERATE_BASE_URL: os.baseUrl, ITERATE_ADMIN_SECRET: os.adminSecret, ITERATE_PROJECT_ID: project.projectId, ITERATE_MODEL_BASE_URL: model.baseUrl, ITERATE_MODEL: "docs-model" });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    await STATED[blockName(block)]?.({ run, project: project.itx, admin });
  });
});
