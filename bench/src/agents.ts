import { SPOKEN, runTurn, type AgentUnderTest, type Segments, type Turn } from "./agent-turn.ts";
import { scriptReply, startLoopbackModelServer, type LoopbackModelServer } from "./peer/loopback-model.ts";
import { interleave, report, reportTail, summarize } from "./stats.ts";
import { measuredAt, openProject, type BenchTarget } from "./target.ts";
import { LIMITS } from "@iterate/os/limits";

/** Warm turns per series (two series). */
const ROUNDS = 40;
const WARM_UP = 5;
const COLD_AGENTS = 5;
/** Issue #18 (round two; issue #6 asked for 50): one warm turn's overhead to `ask`'s answer, model time excluded. */
const TARGET_MS = 20;
/** Issue #6: the whole turn, to the script's settled fact. */
const RUN_SETTLED_TARGET_MS = 50;

// Each turn adds two history items (the message and the reply). Below HISTORY_ITEMS_MAX no
// compaction happens, so no turn pays for the replay a compacted history forces.
if (2 * (1 + WARM_UP + 2 * ROUNDS) > LIMITS.HISTORY_ITEMS_MAX) throw new Error("the warm agent's history would be compacted");

/**
 * One agent turn against a loopback model that answers at once with a script saying "ok":
 * message -> llm-request-requested -> model -> run-requested -> script -> message-sent ->
 * run-settled. A warm agent is timed two ways, interleaved: `ask` (to message-sent) and message
 * plus `waitForEvent` (to run-settled). Cold: the first turn of fresh agents. The model server's
 * own time is taken off each turn; the breakdown comes from the stream's `createdAt` stamps.
 */
export async function measureAgents(target: BenchTarget): Promise<void> {
  const model = await startLoopbackModelServer(() => scriptReply(`async (itx) => { await itx.chat.sendMessage(${JSON.stringify(SPOKEN)}); }`));
  try {
    await measureWith(target, model);
  } finally {
    await model.close();
  }
}

async function measureWith(target: BenchTarget, model: LoopbackModelServer): Promise<void> {
  // At the OS Worker's own socket when the run has it (decision 0030).
  const at = measuredAt(target);
  console.log(`agents: the OS is measured at ${at.description}`);
  const { itx } = await openProject(target, "bench-agents", at.url);
  const newAgent = async (name: string): Promise<AgentUnderTest> => {
    const path = `/agents/${name}`;
    const agent = itx.agents.get(path);
    await agent.create({ llm: { provider: "openai-compatible", baseUrl: model.baseUrl, model: "bench" } });
    return { agent, stream: await itx.streams.get(path), model };
  };
  try {
    const warm = await newAgent("warm");
    // The run's first agent turn: a fresh agent on an OS that has run no agent yet.
    const first = await runTurn(warm, "both");
    for (let i = 0; i < WARM_UP; i++) await runTurn(warm, i % 2 === 0 ? "ask" : "message");
    const asked: Turn[] = [];
    const messaged: Turn[] = [];
    await interleave(ROUNDS, {
      ask: async () => asked.push(await runTurn(warm, "ask")),
      message: async () => messaged.push(await runTurn(warm, "message")),
    });
    const cold: Turn[] = [];
    for (let i = 0; i < COLD_AGENTS; i++) cold.push(await runTurn(await newAgent(`cold-${i}`), "both"));
    reportAgents(model, { first, asked, messaged, cold });
  } finally {
    itx[Symbol.dispose]();
  }
}

function reportAgents(model: LoopbackModelServer, turns: { first: Turn; asked: Turn[]; messaged: Turn[]; cold: Turn[] }): void {
  const { first, asked, messaged, cold } = turns;
  const served = summarize(model.served().map((request) => request.ms));
  report("agents.model_server.median", served.median, "ms (the loopback model's own time, request arrival -> last byte; taken off every turn below)");
  reportTail("agents.model_server", served);
  const ask = summarize(asked.map((turn) => turn.ask ?? Number.NaN));
  const settled = summarize(messaged.map((turn) => turn.runSettled ?? Number.NaN));
  report("agents.turn_ask.median", ask.median, `ms (warm agent, agent.ask: message -> agent/message-sent; ${verdict(ask.median)})`);
  reportTail("agents.turn_ask", ask);
  report("agents.turn_to_run_settled.median", settled.median, `ms (warm agent, agent.message + waitForEvent: message -> itx/run-settled; ${verdict(settled.median, RUN_SETTLED_TARGET_MS)})`);
  reportTail("agents.turn_to_run_settled", settled);
  report("agents.turn_cold.first_in_run.ask", first.ask ?? Number.NaN, "ms (the run's first agent turn: a fresh agent, no agent run before on this OS)");
  report("agents.turn_cold.first_in_run.to_run_settled", first.runSettled ?? Number.NaN, "ms");
  const coldAsk = summarize(cold.map((turn) => turn.ask ?? Number.NaN));
  report("agents.turn_cold.ask.median", coldAsk.median, `ms (first turn of ${cold.length} fresh agents in the warm project)`);
  reportTail("agents.turn_cold.ask", coldAsk);
  const coldSettled = summarize(cold.map((turn) => turn.runSettled ?? Number.NaN));
  report("agents.turn_cold.to_run_settled.median", coldSettled.median, "ms");
  reportTail("agents.turn_cold.to_run_settled", coldSettled);
  reportBreakdown("warm", [...asked, ...messaged]);
  reportBreakdown("cold", cold);
}

function verdict(ms: number, target = TARGET_MS): string {
  return `target <= ${target}: ${ms <= target ? "met" : "missed"}`;
}

const SEGMENTS: Array<[keyof Segments, string]> = [
  ["messageToRequest", `message -> llm-request-requested: delivery to the processor and what is left of DEBOUNCE_MS = ${LIMITS.DEBOUNCE_MS} after the append`],
  ["requestToSettled", "-> llm-request-settled: describe, prompt, egress, the model, reply parsing, one commit"],
  ["settledToMessageSent", "-> message-sent: the script's load and start, its itx.chat.sendMessage"],
  ["messageSentToRunSettled", "-> itx/run-settled: the script's end and settled fact"],
  ["settledToRunSettled", "llm-request-settled -> itx/run-settled: the script, the two above together"],
  ["total", "message -> itx/run-settled on the stream's clock"],
];

// Stamps are whole milliseconds from the stream's clock, so each segment is too.
function reportBreakdown(name: string, turns: Turn[]): void {
  for (const [segment, what] of SEGMENTS) {
    const figures = summarize(turns.map((turn) => turn.segments[segment]));
    report(`agents.breakdown.${name}.${snake(segment)}.median`, figures.median, `ms (${what}; p90 ${figures.p90})`);
    reportTail(`agents.breakdown.${name}.${snake(segment)}`, figures);
  }
  // What the stream's span leaves out of the Node-side figure: the message reaching the stream,
  // the waiter's answer coming back (both Cap'n Web hops), and on a fresh agent its first lookups.
  const outside = turns.flatMap((turn) => (turn.runSettled === undefined ? [] : [turn.runSettled - (turn.segments.total - turn.model)]));
  const outsideSummary = summarize(outside);
  report(`agents.breakdown.${name}.outside_stream.median`, outsideSummary.median, "ms (message -> itx/run-settled from Node, less the same on the stream's clock)");
  reportTail(`agents.breakdown.${name}.outside_stream`, outsideSummary);
}

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
