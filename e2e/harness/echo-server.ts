import { createServer, type IncomingHttpHeaders } from "node:http";
import { listenOnLoopback } from "./loopback-server.ts";

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback HTTP server that records each request and answers it back as JSON. */
export async function startEchoServer(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const entry = { method: request.method ?? "", url: request.url ?? "", headers: request.headers, body };
      received.push(entry);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(entry));
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return {
    url: origin,
    received,
    close,
  };
}
