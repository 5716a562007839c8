import type { Server } from "node:http";

/** A Node HTTP server listening on 127.0.0.1. */
export interface LoopbackServer {
  port: number;
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  origin: string;
  /** Stops listening and drops open connections (keep-alive sockets included), so teardown never waits on a client. */
  close(): Promise<void>;
}

/**
 * Starts `server` on 127.0.0.1 (never another interface: the suites' and benchmarks' stand-ins
 * must not be reachable from the network) at `port`, a free one when omitted.
 *
 * @example
 * const { origin, close } = await listenOnLoopback(createServer(handler));
 */
export async function listenOnLoopback(server: Server, port = 0): Promise<LoopbackServer> {
  await new Promise<void>((listening, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", fail);
      listening();
    });
  });
  const address = server.address();
  const bound = typeof address === "object" && address !== null ? address.port : 0;
  return {
    port: bound,
    origin: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}
