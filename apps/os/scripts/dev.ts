// `pnpm dev`: runs the whole OS locally on workerd and says how to reach it.
//   pnpm dev [--port 8787] [--persist-to DIR]
// The admin secret comes from ITERATE_ADMIN_SECRET, else the documented local default.
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { devBanner } from "./dev-banner.ts";
import { LOCAL_ADMIN_SECRET, startLocalOs } from "./local-os.ts";

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== "--"),
  options: {
    port: { type: "string", default: "8787" },
    "persist-to": { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});

if (values.help) {
  console.log("usage: pnpm dev [--port 8787] [--persist-to DIR]   (ITERATE_ADMIN_SECRET sets the admin secret)");
  process.exit(0);
}

const port = Number(values.port);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error(`--port must be a port number, got ${values.port}`);
  process.exit(2);
}
const persistTo = resolve(process.env.INIT_CWD ?? process.cwd(), values["persist-to"] ?? ".dev-state");
const fromEnv = process.env.ITERATE_ADMIN_SECRET;
const adminSecret = fromEnv !== undefined && fromEnv !== "" ? fromEnv : LOCAL_ADMIN_SECRET;

// Locally, egress may reach your own servers on this machine (loopback only, never the rest of
// your network) unless you say otherwise: EGRESS_ALLOW_PRIVATE_ADDRESSES=1 opens every private range.
const allowPrivate = process.env.EGRESS_ALLOW_PRIVATE_ADDRESSES ?? "loopback";
let os: Awaited<ReturnType<typeof startLocalOs>>;
try {
  os = await startLocalOs({ port, persistTo, adminSecret, inheritOutput: true, vars: { EGRESS_ALLOW_PRIVATE_ADDRESSES: allowPrivate } });
} catch (error) {
  // One line that says what to do (a busy port, most often), not a stack trace.
  console.error(`pnpm dev: ${(error as Error).message.split("\n")[0]}`);
  process.exit(1);
}
console.log(devBanner({ baseUrl: os.baseUrl, persistTo, secretFromEnv: adminSecret === fromEnv }));

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  // Stops wrangler, then the runner and its watchdog.
  await os.stop();
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
// wrangler ended by itself: take the runner down with it.
os.process.on("exit", (code) => {
  if (stopping) return;
  stopping = true;
  void os.stop().finally(() => process.exit(code ?? 1));
});
