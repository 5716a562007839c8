// `restart`: the first calls into an existing project, context and agent after the OS restarts
// (issue #18: printed, no target yet). Runs an OS of its own, since it stops and starts it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectItx } from "iterate/client";
import { startLocalOs, type LocalOs } from "@iterate/os/local-os";
import { SPOKEN, runTurn, type AgentUnderTest } from "./agent-turn.ts";
import { scriptReply, startLoopbackModelServer, type LoopbackModelServer } from "./peer/loopback-model.ts";
import { report, reportTail, summarize, time } from "./stats.ts";

// oxlint-disable typescript/no-explicit-any -- capability paths are dynamic by design

const WARM = 10;
const VARS = { EGRESS_ALLOW_PRIVATE_ADDRESSES: "1" };
const WHOAMI = { type: "itx-expression", steps: [{ path: ["whoami"] }] };

/**
 * Sets up a project with a context holding a mount and an agent that has taken turns, restarts
 * the OS on the same state, then times, in this order, each the first of its kind since the
 * restart: a call that touches no project (the Worker's start), the project's root, the context's
 * mount, and an agent turn (model time taken off). Each is printed beside the warm median of the
 * same call after it. Skipped against BASE_URL (an OS this process cannot restart).
 */
export async function measureRestart(): Promise<void> {
  if (process.env.BASE_URL) {
    console.log("# restart: skipped against BASE_URL (it needs an OS this process can restart)");
    return;
  }
  const persistTo = mkdtempSync(join(tmpdir(), "iterate-bench-restart-"));
  const model = await startLoopbackModelServer(() => scriptReply(`async (itx) => { await itx.chat.sendMessage(${JSON.stringify(SPOKEN)}); }`));
  let os: LocalOs | undefined;
  try {
    os = await startLocalOs({ persistTo, vars: VARS, readyTimeoutMs: 300_000 });
    const projectId = await setUp(os, model);
    await os.stop();
    const restartedAt = performance.now();
    os = await startLocalOs({ persistTo, vars: VARS, readyTimeoutMs: 300_000 });
    report("restart.os_start_to_ready", performance.now() - restartedAt, "ms (wrangler dev and the runner, to the first answer)");
    await measureFirstCalls(os, model, projectId);
  } finally {
    await os?.stop();
    await model.close();
    rmSync(persistTo, { recursive: true, force: true });
  }
}

async function setUp(os: LocalOs, model: LoopbackModelServer): Promise<string> {
  const auth = { type: "admin-secret" as const, secret: os.adminSecret };
  const session: any = connectItx({ baseUrl: os.baseUrl, auth });
  try {
    const { projectId } = await session.projects.create({ slug: `bench-restart-${Date.now().toString(36)}` }).whoami();
    const itx: any = connectItx({ baseUrl: os.baseUrl, auth, projectId });
    try {
      await itx.extend({ name: "kept" }).provideCapability({ name: "probe", capability: WHOAMI });
      const agent = itx.agents.get("/agents/kept");
      await agent.create({ llm: { provider: "openai-compatible", baseUrl: model.baseUrl, model: "bench" } });
      const under: AgentUnderTest = { agent, stream: await itx.streams.get("/agents/kept"), model };
      for (let i = 0; i < 3; i++) await runTurn(under, "ask");
    } finally {
      itx[Symbol.dispose]();
    }
    return projectId;
  } finally {
    session[Symbol.dispose]();
  }
}

async function measureFirstCalls(os: LocalOs, model: LoopbackModelServer, projectId: string): Promise<void> {
  const auth = { type: "admin-secret" as const, secret: os.adminSecret };
  const session: any = connectItx({ baseUrl: os.baseUrl, auth });
  const itx: any = connectItx({ baseUrl: os.baseUrl, auth, projectId });
  try {
    const context = itx.cd("/itx/kept");
    const agent = itx.agents.get("/agents/kept");
    const under: AgentUnderTest = { agent, stream: await itx.streams.get("/agents/kept"), model };
    const figures: Array<[string, string, () => Promise<unknown>]> = [
      ["worker", "a call that touches no project: the OS Worker's start, authentication", () => session.__describe()],
      ["project", "the project's root context: whoami", () => itx.whoami()],
      ["context", "a mount of another context of it: its host folds its table again", () => expectPath(context.probe(), "/itx/kept")],
      ["agent", "an agent turn, ask -> message-sent, model time taken off: its host, its stream, the script's isolate", async () => (await runTurn(under, "ask")).ask],
    ];
    for (const [name, what, call] of figures) {
      // The agent's figure is its turn less the model's own time, as runTurn measures it.
      const measure = async () => (name === "agent" ? ((await call()) as number) : time(call));
      const cold = await measure();
      const warm: number[] = [];
      for (let i = 0; i < WARM; i++) warm.push(await measure());
      const summary = summarize(warm);
      report(`restart.${name}.first_call`, cold, `ms (${what})`);
      report(`restart.${name}.warm.median`, summary.median, "ms (the same call again)");
      reportTail(`restart.${name}.warm`, summary);
    }
  } finally {
    itx[Symbol.dispose]();
    session[Symbol.dispose]();
  }
}

/** An expression mount runs against the context that holds it, so its whoami names that context. */
async function expectPath(answer: Promise<{ path?: string }>, expected: string): Promise<void> {
  const { path } = await answer;
  if (path !== expected) throw new Error(`the probe answered from ${String(path)}, expected ${expected}`);
}
