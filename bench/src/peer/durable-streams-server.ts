// Runs the Durable Streams reference server (the peer the stream benchmarks compare against),
// file-backed in DATA_DIR, on 127.0.0.1:PORT. Started as a child process by peer/durable-streams.ts.
import { DurableStreamTestServer } from "@durable-streams/server";

const server = new DurableStreamTestServer({
  port: Number(process.env.PORT),
  host: "127.0.0.1",
  dataDir: process.env.DATA_DIR,
});
await server.start();
process.stdout.write("ready\n");
const stop = async () => {
  await server.stop();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
