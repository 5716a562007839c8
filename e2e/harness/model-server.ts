import { createServer, type IncomingHttpHeaders } from "node:http";
import { listenOnLoopback } from "./loopback-server.ts";

/** One chat message as the OpenAI-compatible protocol carries it. */
export interface ModelMessage {
  role: string;
  content: string;
}

/** A chat-completions request the model server received. */
export interface ModelRequest {
  model: string;
  messages: ModelMessage[];
  stream: boolean;
  headers: IncomingHttpHeaders;
}

/** What the test's script answers: reply text, or an HTTP failure. */
export type ModelAnswer = string | { status: number; body: string };

/**
 * A real HTTP server on loopback speaking the OpenAI-compatible chat-completions protocol
 * (streaming server-sent events, or one JSON body when `stream` is false). Each request is
 * answered by the test's `answer` function; the requests are kept for assertions.
 */
export async function startModelServer(answer: (request: ModelRequest, index: number) => ModelAnswer | Promise<ModelAnswer>): Promise<{
  /** The API root to configure agents with: `${url}/chat/completions` is the endpoint. */
  baseUrl: string;
  requests: ModelRequest[];
  close(): Promise<void>;
}> {
  const requests: ModelRequest[] = [];
  const server = createServer((request, response) => {
    let raw = "";
    request.on("data", (chunk: Buffer) => (raw += chunk.toString()));
    request.on("end", async () => {
      if (request.method !== "POST" || !request.url?.endsWith("/chat/completions")) {
        response.writeHead(404, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: `no route ${request.method} ${request.url}` } }));
        return;
      }
      const body = JSON.parse(raw) as { model: string; messages: ModelMessage[]; stream?: boolean };
      const received: ModelRequest = { model: body.model, messages: body.messages, stream: body.stream === true, headers: request.headers };
      requests.push(received);
      let reply: ModelAnswer;
      try {
        reply = await answer(received, requests.length - 1);
      } catch (error) {
        reply = { status: 500, body: JSON.stringify({ error: { message: String(error) } }) };
      }
      if (typeof reply !== "string") {
        response.writeHead(reply.status, { "content-type": "application/json" });
        response.end(reply.body);
        return;
      }
      if (!received.stream) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }] }));
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const piece of pieces(reply, 24)) {
        response.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: piece } }] })}\n\n`);
      }
      response.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 10, completion_tokens: reply.length } })}\n\n`);
      response.end("data: [DONE]\n\n");
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return {
    baseUrl: `${origin}/v1`,
    requests,
    close,
  };
}

/** A reply holding one script block, the way the agent contract asks for it. */
export function scriptReply(script: string, prose = "Here is my script."): string {
  return `${prose}\n\n\`\`\`ts\n${script}\n\`\`\`\n`;
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let index = 0; index < text.length; index += size) out.push(text.slice(index, index + size));
  return out.length > 0 ? out : [""];
}
