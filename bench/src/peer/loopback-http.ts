import { createServer } from "node:http";

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
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    answered: () => answered,
    close: () =>
      new Promise((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}
