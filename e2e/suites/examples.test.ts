import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runInThisContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Browser, Page } from "playwright-core";
import { connectItx, type Handle } from "iterate/client";
import type { ProjectRoot, StreamEvent } from "iterate/types";
import { launchBrowser } from "../harness/browser.ts";
import { CLI_BIN, cliRunner } from "../harness/cli.ts";
import { EXAMPLES_DIR, RUNTIMES, exampleWorker, loadExamples, type Example, type Runtime } from "../harness/examples.ts";
import { scriptReply, startModelServer } from "../harness/model-server.ts";
import { target } from "../harness/os.ts";
import { newProject } from "../harness/projects.ts";

// The example catalogue (examples/*.js) as one matrix: each example in each runtime it claims,
// against one project, answering the JSON its header promises. The slow set-ups (Chromium, the
// project worker's build) start together, once.
const EXAMPLES = loadExamples();
const RUN_REQUESTED = "events.iterate.com/itx/run-requested";
const RUN_SETTLED = "events.iterate.com/itx/run-settled";
const WORKER_UPDATED = "events.iterate.com/project/worker-updated";
const WORKER_UPDATE_FAILED = "events.iterate.com/project/worker-update-failed";

/** What the catalogue's worker (`exampleWorker`) exposes on `itx.worker`. */
interface ExampleWorker {
  worker: { runExample(name: string): unknown };
}

// One project for the whole file (its worker's build is the slow part), so not the per-test fixture.
let project: { projectId: string; slug: string };
let itx: Handle<ProjectRoot & ExampleWorker>;
let browser: Browser | undefined;
let page: Page | undefined;
let model: Awaited<ReturnType<typeof startModelServer>> | undefined;
// The project worker's build is the slowest set-up: the other runtimes run while it builds.
let workerReady: Promise<void>;
// Each CLI run is a Node process of its own (seconds on a loaded machine): they all start at once.
const cliRuns = new Map<string, Promise<unknown>>();
const cli = cliRunner(CLI_BIN);

function claiming(runtime: Runtime): Example[] {
  return EXAMPLES.filter((example) => example.runtimes.includes(runtime));
}

beforeAll(async () => {
  project = await newProject("examples");
  const { baseUrl, admin, adminSecret } = target();
  itx = connectItx<ExampleWorker>({ baseUrl, auth: admin, projectId: project.projectId });
  // The model answers an agent's first turn with its example (the agent's name says which) and the
  // next with a script that returns nothing, which ends the agent's loop.
  model = await startModelServer((request) => {
    const name = request.model.replace(/^example-/, "");
    const example = EXAMPLES.find((candidate) => candidate.name === name);
    const ran = request.messages.some((message) => message.content.startsWith("[script"));
    return scriptReply(example && !ran ? example.source : "async () => undefined");
  });
  workerReady = (async () => {
    const before = await itx.waitForEvent({ type: WORKER_UPDATED, timeoutMs: 120_000 });
    const { commit } = await itx.repo.commit({ message: "the example catalogue", files: { "worker.ts": exampleWorker(claiming("worker")) } });
    const outcome = (await itx.waitForEvent({ types: [WORKER_UPDATED, WORKER_UPDATE_FAILED], afterOffset: before.offset, payload: { commit }, timeoutMs: 240_000 })) as StreamEvent<string, { error?: string }>;
    if (outcome.type === WORKER_UPDATE_FAILED) throw new Error(`the examples' worker did not build: ${outcome.payload.error}`);
  })();
  workerReady.catch(() => undefined); // awaited (and reported) by the worker runtime's tests
  for (const example of claiming("cli")) {
    const run = runCli(example);
    run.catch(() => undefined); // awaited (and reported) by the example's own test
    cliRuns.set(example.name, run);
  }
  const signedIn = (async () => {
    browser = await launchBrowser();
    page = await (await browser.newContext()).newPage();
    await page.goto(baseUrl);
    await page.fill("input[name=secret]", adminSecret);
    await page.click("button[type=submit]");
    await page.waitForSelector("[data-testid=principal]");
  })();
  await signedIn;
}, 180_000);

afterAll(async () => {
  itx?.[Symbol.dispose]();
  await browser?.close();
  await model?.close();
});

async function runCli(example: Example): Promise<unknown> {
  const { baseUrl, adminSecret } = target();
  const result = await cli.run(["run", example.file, "-p", project.slug, "--json"], { ITERATE_BASE_URL: baseUrl, ITERATE_ADMIN_SECRET: adminSecret });
  if (result.code !== 0) throw new Error(`iterate run exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** Runs `example` in the dashboard's REPL in one of its modes; its answer as JSON-shaped data. */
async function inRepl(example: Example, mode: "os" | "page"): Promise<unknown> {
  const tab = page as Page;
  await tab.goto(`${target().baseUrl}/#/p/${project.slug}/repl`);
  await tab.selectOption("select[name=mode]", mode);
  await tab.fill("textarea[name=code]", example.source);
  await tab.click("button:text-is('Run')");
  const settled = await tab.waitForSelector("[data-testid=repl-result][data-status=ok], [data-testid=repl-result][data-status=failed]", { timeout: 20_000 });
  if ((await settled.getAttribute("data-status")) !== "ok") throw new Error(`the REPL (${mode}) failed: ${await settled.textContent()}`);
  return JSON.parse((await settled.getAttribute("data-json")) ?? "null");
}

/** Runs `example` in `runtime` and answers its result as JSON-shaped data. */
const RUNNERS: Record<Runtime, (example: Example) => Promise<unknown>> = {
  async node(example) {
    // Node is not a browser page: the function is evaluated here and handed a live handle.
    const script = runInThisContext(`(${example.source}\n)`, { filename: example.file }) as (handle: unknown) => Promise<unknown>;
    return JSON.parse(JSON.stringify(await script(itx)));
  },
  async cli(example) {
    return cliRuns.get(example.name) ?? runCli(example);
  },
  async browser(example) {
    // The REPL's two modes: on the OS (itx.run) and in the page (its sandboxed frame, against the
    // page's live handle). Both must answer the same; that answer is compared with the expected one.
    const onOs = await inRepl(example, "os");
    const inPage = await inRepl(example, "page");
    if (JSON.stringify(inPage) !== JSON.stringify(onOs)) throw new Error(`the REPL's modes disagree: on the OS ${JSON.stringify(onOs)}, in the page ${JSON.stringify(inPage)}`);
    return inPage;
  },
  async run(example) {
    return itx.run(example.source);
  },
  async worker(example) {
    await workerReady;
    return itx.worker.runExample(example.name);
  },
  async agent(example) {
    const path = `/agents/example-${example.name}-${Math.random().toString(36).slice(2, 6)}`;
    const agent = itx.agents.get(path);
    await agent.create({ llm: { provider: "openai-compatible", baseUrl: (model as { baseUrl: string }).baseUrl, model: `example-${example.name}` } });
    const stream = itx.streams.get(path);
    const sent = await agent.message("Run the example, please.");
    // The agent's own run is the first one requested after the message (a script may start runs of its own).
    const requested = await stream.waitForEvent({ type: RUN_REQUESTED, afterOffset: sent.offset, timeoutMs: 30_000 });
    const settled = (await stream.waitForEvent({ type: RUN_SETTLED, afterOffset: requested.offset, payload: { requestOffset: requested.offset }, timeoutMs: 30_000 })) as StreamEvent<string, { status: string; error?: unknown; result?: unknown }>;
    if (settled.payload.status !== "succeeded") throw new Error(`the agent's script failed: ${JSON.stringify(settled.payload.error)}`);
    return settled.payload.result;
  },
};

describe("the example catalogue", () => {
  test("every example names known runtimes and an expected answer, and the README lists each", () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(5);
    const readme = readFileSync(join(EXAMPLES_DIR, "README.md"), "utf8");
    for (const example of EXAMPLES) {
      expect(example.runtimes.length, example.name).toBeGreaterThan(0);
      expect(readme, example.name).toContain(`\`${example.name}.js\``);
    }
    // Every runtime is exercised by some example.
    for (const runtime of RUNTIMES) expect(claiming(runtime).length, runtime).toBeGreaterThan(0);
  });
});

describe.each(RUNTIMES)("examples in %s", (runtime) => {
  test.each(claiming(runtime).map((example) => [example.name, example] as const))("%s", async (_name, example) => {
    expect(await RUNNERS[runtime](example)).toEqual(example.expected);
  }, runtime === "worker" ? 300_000 : 60_000);
});
