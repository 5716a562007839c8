import { ItxError } from "iterate/errors";
import type { LlmConfig } from "./agent-contract.ts";
import type { ChatMessage } from "./agent-prompt.ts";
import { LIMITS, limitDetails } from "../limits.ts";
import { raceDeadline } from "../limits/deadline.ts";
import { concat } from "../bytes.ts";

/** Characters of a failed answer's body quoted in the error. */
const ERROR_DETAIL_MAX_CHARS = 300;
const NEWLINE = 0x0a;

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
  /** How long the model may take; LLM_TIMEOUT_MS unless a test asks for less. */
  timeoutMs?: number;
}

/**
 * Asks the configured provider. Failures are coded errors: the agent records them on the stream.
 * Past the deadline the request fails with TIMEOUT and the answer's body is cancelled: the reading
 * stops with the waiting.
 */
export async function complete(request: CompletionRequest): Promise<Completion> {
  const { config } = request;
  const timeoutMs = request.timeoutMs ?? LIMITS.LLM_TIMEOUT_MS;
  const stop = new AbortController();
  const answer = config.provider === "workers-ai" ? completeWithWorkersAi(request, config.model) : completeOpenAiCompatible(request, config, stop.signal);
  return raceDeadline(answer, timeoutMs, (): never => {
    const error = new ItxError("TIMEOUT", `the model did not finish within ${timeoutMs} ms (LLM_TIMEOUT_MS)`);
    stop.abort(error);
    throw error;
  });
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
async function completeOpenAiCompatible(
  request: CompletionRequest,
  config: Extract<LlmConfig, { provider: "openai-compatible" }>,
  signal: AbortSignal,
): Promise<Completion> {
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
    // Only the start of an error answer is kept, so only that much of it is read.
    const start = await readUpTo(response, ERROR_DETAIL_MAX_CHARS * 4, signal).catch(() => undefined);
    const detail = start ? new TextDecoder().decode(start.bytes).slice(0, ERROR_DETAIL_MAX_CHARS) : "";
    throw new ItxError("UNAVAILABLE", `the model at ${url} answered HTTP ${response.status}${detail ? `: ${detail}` : ""}`, {
      details: { status: response.status },
    });
  }
  const type = response.headers.get("content-type") ?? "";
  if (!type.includes("text/event-stream")) return readJsonCompletion(response, url, request.onDelta, signal);
  return readEventStream(response, url, request.onDelta, signal);
}

// A server that ignores `stream` answers one JSON completion.
async function readJsonCompletion(response: Response, url: string, onDelta: (delta: string) => void, signal: AbortSignal): Promise<Completion> {
  const { bytes, whole } = await readUpTo(response, LIMITS.LLM_RESPONSE_MAX_BYTES, signal);
  if (!whole) {
    throw new ItxError("LIMIT_EXCEEDED", `the model at ${url} answered more than ${LIMITS.LLM_RESPONSE_MAX_BYTES} bytes (LLM_RESPONSE_MAX_BYTES)`, {
      details: limitDetails("LLM_RESPONSE_MAX_BYTES"),
    });
  }
  let json: { choices?: Array<{ message?: { content?: unknown } }>; usage?: Record<string, number> };
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new ItxError("UNAVAILABLE", `the model at ${url} answered a body that is not JSON`);
  }
  const text = json.choices?.[0]?.message?.content;
  if (typeof text !== "string") throw new ItxError("UNAVAILABLE", `the model at ${url} answered without choices[0].message.content`);
  onDelta(text);
  return { text: capped(text), ...(json.usage ? { usage: numbers(json.usage) } : {}) };
}

async function readEventStream(response: Response, url: string, onDelta: (delta: string) => void, signal: AbortSignal): Promise<Completion> {
  if (!response.body) throw new ItxError("UNAVAILABLE", `the model at ${url} answered an empty stream`);
  // Lines are split and decoded here rather than through a TextDecoderStream: a pipe between two
  // streams costs each chunk more turns of the event loop, and the agent's turn waits for the last one.
  const body = new BodyReader(response.body, signal);
  const lines = new LineSplitter(url);
  let text = "";
  let usage: Record<string, number> | undefined;
  try {
    for (;;) {
      const chunk = await body.read();
      if (!chunk) return { text, ...(usage ? { usage } : {}) };
      for (const raw of lines.push(chunk)) {
        const line = raw.trim();
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") return { text, ...(usage ? { usage } : {}) };
        const parsed = parseChunk(data, url);
        if (parsed.error) throw new ItxError("UNAVAILABLE", `the model at ${url} streamed an error: ${parsed.error}`);
        if (parsed.delta) {
          text += parsed.delta;
          capped(text);
          onDelta(parsed.delta);
        }
        if (parsed.usage) usage = parsed.usage;
      }
    }
  } finally {
    // An answer left before its end ([DONE], a failure, the deadline) is cancelled, so its sender stops.
    body.close();
  }
}

/**
 * The reader of an answer's body, cancelled when `signal` aborts: a read under way ends, and `read`
 * throws the abort's reason. `close` stops listening and cancels a body not read to its end.
 */
class BodyReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #signal: AbortSignal;
  readonly #cancel = () => void this.#reader.cancel(this.#signal.reason).catch(() => undefined);
  #ended = false;

  constructor(body: ReadableStream<Uint8Array>, signal: AbortSignal) {
    this.#reader = body.getReader();
    this.#signal = signal;
    if (signal.aborted) this.#cancel();
    else signal.addEventListener("abort", this.#cancel, { once: true });
  }

  /** The next chunk, or undefined at the body's end. */
  async read(): Promise<Uint8Array | undefined> {
    this.#signal.throwIfAborted();
    const { value, done } = await this.#reader.read();
    this.#signal.throwIfAborted();
    if (done) this.#ended = true;
    return done ? undefined : value;
  }

  close(): void {
    this.#signal.removeEventListener("abort", this.#cancel);
    if (!this.#ended) void this.#reader.cancel().catch(() => undefined);
  }
}

/**
 * Splits a byte stream into lines at "\n": each byte is searched once, where it arrives, and a line
 * waiting for its newline is held to LLM_STREAM_LINE_MAX_BYTES. "\n" never falls inside a UTF-8
 * character, so each line decodes on its own.
 */
class LineSplitter {
  readonly #url: string;
  readonly #decoder = new TextDecoder();
  #held: Uint8Array[] = [];
  #heldBytes = 0;

  constructor(url: string) {
    this.#url = url;
  }

  /** The lines `chunk` completes, decoded; the rest of it is held for the next. */
  push(chunk: Uint8Array): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE); newline >= 0; newline = chunk.indexOf(NEWLINE, start)) {
      this.#hold(chunk.subarray(start, newline));
      lines.push(this.#decoder.decode(concat(this.#held)));
      this.#held = [];
      this.#heldBytes = 0;
      start = newline + 1;
    }
    this.#hold(chunk.subarray(start));
    return lines;
  }

  #hold(part: Uint8Array): void {
    this.#heldBytes += part.byteLength;
    if (this.#heldBytes > LIMITS.LLM_STREAM_LINE_MAX_BYTES) {
      throw new ItxError("LIMIT_EXCEEDED", `the model at ${this.#url} streamed a line longer than ${LIMITS.LLM_STREAM_LINE_MAX_BYTES} bytes (LLM_STREAM_LINE_MAX_BYTES)`, {
        details: limitDetails("LLM_STREAM_LINE_MAX_BYTES"),
      });
    }
    if (part.byteLength > 0) this.#held.push(part);
  }
}

// A body's first bytes: all of it (`whole`) if it ends within `maxBytes`, else a little more than
// `maxBytes` of it, the rest cancelled.
async function readUpTo(response: Response, maxBytes: number, signal: AbortSignal): Promise<{ bytes: Uint8Array; whole: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(), whole: true };
  const body = new BodyReader(response.body, signal);
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (let chunk = await body.read(); chunk; chunk = await body.read()) {
      chunks.push(chunk);
      total += chunk.byteLength;
      if (total > maxBytes) return { bytes: concat(chunks), whole: false };
    }
    return { bytes: concat(chunks), whole: true };
  } finally {
    body.close();
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
