import { createServer } from "node:http";
import { listenOnLoopback } from "@iterate/e2e/harness/loopback-server";

/** One chat-completions request the server answered, with the server's own time for it. */
export interface ServedRequest {
  model: string;
  /** Chat messages in the request (system and history). */
  messages: number;
  /** Milliseconds from the request's arrival to the reply's last byte handed to the socket. */
  ms: number;
}

export interface LoopbackModelServer {
  /** The API root to configure an agent with: `${baseUrl}/chat/completions` is the endpoint. */
  baseUrl: string;
  /** Every request answered so far, oldest first. */
  served(): readonly ServedRequest[];
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 that answers at once, so that an
 * agent turn's figures are the platform's and not a model's. The reply is whatever `answer`
 * gives for the request's model name, sent as server-sent events (a few `delta` chunks, a usage
 * chunk and `[DONE]`) in one write. Each request's own time in this server is recorded, for the
 * benchmarks to subtract.
 */
export async function startLoopbackModelServer(answer: (model: string) => string): Promise<LoopbackModelServer> {
  const served: ServedRequest[] = [];
  const server = createServer((request, response) => {
    const arrived = performance.now();
    let raw = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (raw += chunk));
    request.on("end", () => {
      if (request.method !== "POST" || !request.url?.endsWith("/chat/completions")) {
        response.writeHead(404, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: `no route ${request.method} ${request.url}` } }));
        return;
      }
      const body = JSON.parse(raw) as { model: string; messages: unknown[] };
      const reply = answer(body.model);
      response.on("finish", () => served.push({ model: body.model, messages: body.messages.length, ms: performance.now() - arrived }));
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      response.end(sse(reply));
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return {
    baseUrl: `${origin}/v1`,
    served: () => served,
    close,
  };
}

/** A reply holding one script block, the way the agent contract asks for it. */
export function scriptReply(script: string): string {
  return `Here is my script.\n\n\`\`\`ts\n${script}\n\`\`\`\n`;
}

// The whole streamed reply as one body: the client still parses it chunk by chunk.
function sse(reply: string): string {
  const chunks: string[] = [];
  for (let index = 0; index < reply.length; index += 32) {
    chunks.push(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: reply.slice(index, index + 32) } }] })}\n\n`);
  }
  chunks.push(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: reply.length } })}\n\n`, "data: [DONE]\n\n");
  return chunks.join("");
}
