import { ItxError } from "iterate/errors";
import type { LlmConfig } from "./agent-contract.ts";
import type { ChatMessage } from "./agent-prompt.ts";
import { LIMITS, limitDetails } from "../limits.ts";

/** A model's whole reply, assembled from its stream. */
export interface Completion {
  text: string;
  usage?: Record<string, number>;
}

/** What a provider adapter is handed. `fetch` is the agent context's egress road. */
export interface CompletionRequest {
  config: LlmConfig;
  messages: ChatMessage[];
  fetch(request: Request): Promise<Response>;
  /** The Workers AI binding, present only when deployed with one. */
  ai?: { run(model: string, input: unknown): Promise<unknown> };
  onDelta(delta: string): void;
}

/** Asks the configured provider. Failures are coded errors: the agent records them on the stream. */
export async function complete(request: CompletionRequest): Promise<Completion> {
  const { config } = request;
  if (config.provider === "workers-ai") return completeWithWorkersAi(request, config.model);
  return completeOpenAiCompatible(request, config);
}

async function completeWithWorkersAi(request: CompletionRequest, model: string): Promise<Completion> {
  if (!request.ai) {
    throw new ItxError(
      "UNAVAILABLE",
      "the workers-ai provider needs the AI binding, which exists only when the OS is deployed to Cloudflare; " +
        'configure this agent with { llm: { provider: "openai-compatible", baseUrl, model, apiKey } } to run locally',
    );
  }
  const answer = (await request.ai.run(model, { messages: request.messages })) as { response?: unknown; usage?: Record<string, number> };
  const text = typeof answer?.response === "string" ? answer.response : "";
  request.onDelta(text);
  return { text, ...(answer?.usage ? { usage: answer.usage } : {}) };
}

/**
 * Chat completions with `stream: true` (server-sent events), through the agent's egress. The key
 * travels as a `getSecret(...)` placeholder that only the egress pipe's terminal step substitutes.
 */
async function completeOpenAiCompatible(request: CompletionRequest, config: Extract<LlmConfig, { provider: "openai-compatible" }>): Promise<Completion> {
  // The body carries conversation text anyone could have written; the pipe substitutes secrets in headers only.
  const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
  if (config.apiKey) headers.authorization = `Bearer getSecret(${JSON.stringify(config.apiKey)})`;
  const body = {
    model: config.model,
    messages: request.messages,
    stream: true,
    stream_options: { include_usage: true },
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
  };
  const url = `${config.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const response = await request.fetch(new Request(url, { method: "POST", headers, body: JSON.stringify(body) }));
  if (!response.ok) {
    const detail = (await response.text().catch(() => "")).slice(0, 300);
    throw new ItxError("UNAVAILABLE", `the model at ${url} answered HTTP ${response.status}${detail ? `: ${detail}` : ""}`, {
      details: { status: response.status },
    });
  }
  const type = response.headers.get("content-type") ?? "";
  if (!type.includes("text/event-stream")) {
    // A server that ignores `stream` answers one JSON completion.
    const json = (await response.json()) as { choices?: Array<{ message?: { content?: unknown } }>; usage?: Record<string, number> };
    const text = json.choices?.[0]?.message?.content;
    if (typeof text !== "string") throw new ItxError("UNAVAILABLE", `the model at ${url} answered without choices[0].message.content`);
    request.onDelta(text);
    return { text: capped(text), ...(json.usage ? { usage: numbers(json.usage) } : {}) };
  }
  return readEventStream(response, url, request.onDelta);
}

async function readEventStream(response: Response, url: string, onDelta: (delta: string) => void): Promise<Completion> {
  if (!response.body) throw new ItxError("UNAVAILABLE", `the model at ${url} answered an empty stream`);
  // Decoded here rather than through a TextDecoderStream: a pipe between two streams costs each
  // chunk more turns of the event loop, and the agent's turn waits for the last one.
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let text = "";
  let usage: Record<string, number> | undefined;
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buffered += decoder.decode(value, { stream: true });
    if (done) buffered += decoder.decode();
    let newline = buffered.indexOf("\n");
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf("\n");
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") {
        await reader.cancel().catch(() => undefined);
        return { text, ...(usage ? { usage } : {}) };
      }
      const chunk = parseChunk(data, url);
      if (chunk.error) throw new ItxError("UNAVAILABLE", `the model at ${url} streamed an error: ${chunk.error}`);
      if (chunk.delta) {
        text += chunk.delta;
        if (text.length > LIMITS.REPLY_MAX_LENGTH) {
          await reader.cancel().catch(() => undefined);
          throw new ItxError("LIMIT_EXCEEDED", `the model's reply passed ${LIMITS.REPLY_MAX_LENGTH} characters (REPLY_MAX_LENGTH)`, {
            details: limitDetails("REPLY_MAX_LENGTH"),
          });
        }
        onDelta(chunk.delta);
      }
      if (chunk.usage) usage = chunk.usage;
    }
    if (done) return { text, ...(usage ? { usage } : {}) };
  }
}

function parseChunk(data: string, url: string): { delta?: string; usage?: Record<string, number>; error?: string } {
  let json: { choices?: Array<{ delta?: { content?: unknown } }>; usage?: unknown; error?: { message?: unknown } };
  try {
    json = JSON.parse(data);
  } catch {
    throw new ItxError("UNAVAILABLE", `the model at ${url} streamed a line that is not JSON: ${data.slice(0, 120)}`);
  }
  if (json.error) return { error: String(json.error.message ?? "unknown error") };
  const content = json.choices?.[0]?.delta?.content;
  return {
    ...(typeof content === "string" && content.length > 0 ? { delta: content } : {}),
    ...(json.usage && typeof json.usage === "object" ? { usage: numbers(json.usage as Record<string, unknown>) } : {}),
  };
}

function numbers(record: Record<string, unknown>): Record<string, number> {
  return Object.fromEntries(Object.entries(record).filter((entry): entry is [string, number] => typeof entry[1] === "number"));
}

function capped(text: string): string {
  if (text.length > LIMITS.REPLY_MAX_LENGTH) {
    throw new ItxError("LIMIT_EXCEEDED", `the model's reply passed ${LIMITS.REPLY_MAX_LENGTH} characters (REPLY_MAX_LENGTH)`, {
      details: limitDetails("REPLY_MAX_LENGTH"),
    });
  }
  return text;
}
