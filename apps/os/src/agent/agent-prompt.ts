import type { AgentState, HistoryItem } from "./agent-contract.ts";

/** A provider-neutral chat message: what every provider adapter is handed. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** What `__describe()` answered for the agent's context, as far as the prompt needs it. */
export interface SurfaceDescription {
  path?: string;
  capabilities?: Array<{ path: string[]; kind: string; scope?: string; instructions?: string; types?: string; connected?: boolean; shadowed?: boolean }>;
}

/**
 * The contract every agent is taught first. The model answers in code: one script per reply,
 * run in the agent's own context; what the script returns comes back as the next input.
 */
export const AGENT_CONTRACT = `You are an agent on the iterate platform. You act only by writing code.

Reply with exactly one fenced \`\`\`ts block holding exactly one function:

\`\`\`ts
async (itx) => {
  // call capabilities here
}
\`\`\`

The platform runs it in your own context (your itx). Rules:
- Talk to the person with await itx.chat.sendMessage("text"). Plain prose outside the block is never shown to anyone.
- Return a value (JSON) when you need to see it: it comes back to you as the next message and you get another turn.
- Return undefined (or nothing) when you are done: that ends your turn.
- If the script throws, the error comes back to you and you get another turn to fix it.
- Write plain JavaScript inside the block (no type annotations); await every call.
- Messages from other agents or contexts arrive as "[from /path] text". Reply to another agent with await itx.agents.get("/path").message("text").
- Everything you can call is listed below (your only view of the world). Call a capability at path a.b as await itx.a.b(...args).`;

/** Renders a describe inventory as the capability list the model reads. */
export function renderSurface(description: SurfaceDescription): string {
  const rows = (description.capabilities ?? []).filter((capability) => !capability.shadowed);
  const lines = rows.map((capability) => {
    const name = `itx.${capability.path.join(".")}`;
    const notes = [capability.instructions ?? "", capability.connected === false ? "(disconnected: calls fail until it is provided again)" : ""]
      .filter((note) => note.length > 0)
      .join(" ");
    const types = capability.types ? `\n  types: ${capability.types.replace(/\n/g, "\n  ")}` : "";
    return `- ${name}${capability.kind === "built-in" ? "" : ` [${capability.kind}${capability.scope ? ` on ${capability.scope}` : ""}]`}: ${notes}${types}`;
  });
  return `Your context is ${description.path ?? "unknown"}. Capabilities:\n${lines.join("\n")}`;
}

/**
 * The messages of the request at `requestOffset`: the system lane, then the history lane's items
 * older than the request. Items from other contexts read as "[from /path] ...".
 */
export function requestMessages(state: AgentState, requestOffset: number, surface: string): ChatMessage[] {
  const system = [AGENT_CONTRACT, state.system.systemPrompt ?? "", surface].filter((part) => part.length > 0).join("\n\n");
  const history = state.history.filter((item) => item.offset < requestOffset).map(toMessage);
  return [{ role: "system", content: system }, ...history];
}

// Developer items go to the model as user messages: OpenAI-compatible servers differ on whether
// they know a developer role, and every one of them knows "user".
function toMessage(item: HistoryItem): ChatMessage {
  if (item.role === "assistant") return { role: "assistant", content: item.content };
  const content = item.from ? `[from ${item.from}] ${item.content}` : item.content;
  return { role: "user", content };
}
