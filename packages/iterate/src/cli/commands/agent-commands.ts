import { createInterface } from "node:readline";
import type { Command } from "commander";
import type { AgentConfig, StreamEvent } from "../../types.ts";
import type { CliContext, Stub } from "../cli-context.ts";
import { UsageError } from "../target.ts";
import { parseInteger } from "./context-commands.ts";
import { forTerminal } from "../render.ts";

const PROJECT_OPTION = ["-p, --project <slug>", "the agent's project (default: ITERATE_PROJECT)"] as const;
// The agent's ephemeral deltas of the model's reply, and the agent's words to people.
const RESPONSE_FRAME = "events.iterate.com/agent/llm-response-frame";
const MESSAGE_SENT = "events.iterate.com/agent/message-sent";

/** `agents create|ask|chat`. */
export function registerAgentCommands(program: Command, ctx: CliContext): void {
  const agents = program.command("agents").description("create agents and talk to them");
  const agentAt = (path: string, project: string | undefined): Stub => ctx.context(project).agents.get(agentPath(path));

  agents
    .command("create")
    .description("create an agent (get-or-create) with an OpenAI-compatible model")
    .argument("<path>", "its name or path: helper or /agents/helper")
    .option(...PROJECT_OPTION)
    .option("--llm-base-url <url>", "the model server's API root, e.g. https://api.openai.com/v1")
    .option("--model <model>", "the model's name")
    .option("--api-key <secret-path>", "the secret holding the API key, e.g. /secrets/openai (see `iterate secrets set`)")
    .option("--system-prompt <text>", "the agent's system prompt")
    .action(async (path: string, options: { project?: string; llmBaseUrl?: string; model?: string; apiKey?: string; systemPrompt?: string }) => {
      const config: AgentConfig = {};
      if (options.llmBaseUrl !== undefined || options.model !== undefined) {
        if (options.llmBaseUrl === undefined || options.model === undefined) throw new UsageError("--llm-base-url and --model go together");
        config.llm = { provider: "openai-compatible", baseUrl: options.llmBaseUrl, model: options.model, ...(options.apiKey ? { apiKey: options.apiKey } : {}) };
      }
      if (options.systemPrompt !== undefined) config.systemPrompt = options.systemPrompt;
      const answer = (await ctx.step("creating the agent", agentAt(path, options.project).create(config))) as { path: string; created: boolean };
      ctx.print(answer, `${answer.created ? "created" : "already there:"} ${answer.path}`);
    });

  agents
    .command("ask")
    .description("send one message and print the agent's reply")
    .argument("<path>", "the agent: helper or /agents/helper")
    .argument("<message>", "what to say")
    .option(...PROJECT_OPTION)
    .option("--timeout <ms>", "how long to wait for the reply", parseInteger)
    .action(async (path: string, message: string, options: { project?: string; timeout?: number }) => {
      const ask = agentAt(path, options.project).ask({ message, ...(options.timeout === undefined ? {} : { timeoutMs: options.timeout }) });
      const answer = (await ctx.step("waiting for the agent", ask)) as { text: string | null; offset: number };
      ctx.print(answer, answer.text ?? "(the agent ended its turn without a message)");
    });

  agents
    .command("chat")
    .description("talk with an agent: each line you type is a message; its reply streams as it is written")
    .argument("<path>", "the agent: helper or /agents/helper")
    .option(...PROJECT_OPTION)
    .option("--timeout <ms>", "how long to wait for each reply", parseInteger)
    .action(async (path: string, options: { project?: string; timeout?: number }) => {
      const agent = agentAt(path, options.project);
      const stream = agent.stream;
      const out = ctx.io.stdout;
      const tty = out.isTTY === true && !ctx.json;
      let streaming = false;
      // The model's reply (its script) streams dimmed while it is written; the agent's message follows.
      const { key } = (await ctx.step(
        "connecting to the agent",
        stream.subscribe(
          (events: StreamEvent[]) => {
            for (const event of events) {
              if (ctx.json) {
                if (event.type === RESPONSE_FRAME || event.type === MESSAGE_SENT) out.write(`${JSON.stringify(event)}\n`);
              } else if (event.type === RESPONSE_FRAME) {
                const delta = forTerminal(String((event.payload as { delta?: unknown }).delta ?? ""));
                out.write(tty ? `\x1b[2m${delta}\x1b[22m` : delta);
                streaming = true;
              }
            }
          },
          { afterOffset: (await stream.head()) as number },
        ),
      )) as { key: string };
      const lines = createInterface({ input: ctx.io.stdin, terminal: false });
      const prompt = () => ctx.io.stdin.isTTY && ctx.io.stderr.write("you> ");
      prompt();
      try {
        for await (const line of lines) {
          if (line.trim() === "") {
            prompt();
            continue;
          }
          const answer = (await agent.ask({ message: line, ...(options.timeout === undefined ? {} : { timeoutMs: options.timeout }) })) as { text: string | null };
          if (streaming && !ctx.json) out.write("\n");
          streaming = false;
          if (!ctx.json) out.write(`${path}> ${forTerminal(answer.text ?? "(no message)")}\n`);
          prompt();
        }
      } finally {
        lines.close();
        await stream.unsubscribe(key).catch(() => undefined);
      }
    });
}

/** `helper` or `/agents/helper` as the agent's path. */
export function agentPath(name: string): string {
  if (name.startsWith("/agents/")) return name;
  if (name.startsWith("/")) throw new UsageError(`an agent lives under /agents/, got ${JSON.stringify(name)}`);
  return `/agents/${name}`;
}
