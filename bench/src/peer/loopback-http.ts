import { createServer } from "node:http";
import { listenOnLoopback } from "@iterate/e2e/harness/loopback-server";

export interface LoopbackHttpServer {
  url: string;
  /** Requests answered so far. */
  answered(): number;
  close(): Promise<void>;
}

/**
 * The egress benchmarks' destination: node:http on 127.0.0.1 answering every request with a
 * two-byte body, so the figures are the road to it and not the server's work.
 */
export async function startLoopbackHttpServer(): Promise<LoopbackHttpServer> {
  let answered = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      answered += 1;
      response.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
      response.end("ok");
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return {
    url: origin,
    answered: () => answered,
    close,
  };
}
