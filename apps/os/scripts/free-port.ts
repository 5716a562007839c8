// Node-only: a loopback port nobody listens on, for the local OS, its runner and the benchmarks.
import { createServer } from "node:net";

/** Asks the kernel for a port nobody listens on. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => done(port));
    });
  });
}
