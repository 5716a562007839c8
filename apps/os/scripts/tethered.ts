// Node-only: runs one command and ties its life to the process that started this one.
//   node tethered.ts <command> [args...]
// local-os.ts starts `wrangler dev` through it in a process group of its own (so a stop kills
// wrangler and its workerd together). When the starter dies without stopping it (SIGKILL, a
// crashed test runner), this process is re-parented; it then kills its whole group, so no OS is
// left serving, holding ports and CPU, after the test run or bench that owned it has gone.
import { spawn } from "node:child_process";

/** How often the parent is checked, and how long the group gets to stop before SIGKILL. */
const TETHER_POLL_MS = 500;
const TETHER_GRACE_MS = 3_000;

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  console.error("usage: node tethered.ts <command> [args...]");
  process.exit(2);
}

const parent = process.ppid;
const child = spawn(command, args, { stdio: "inherit" });
child.once("exit", (code, signal) => process.exit(code ?? (signal === null ? 0 : 1)));
child.once("error", (error) => {
  console.error(`tethered: could not start ${command}: ${error.message}`);
  process.exit(1);
});

let stopping = false;
function stopGroup(): void {
  if (stopping) return;
  stopping = true;
  signalGroup("SIGTERM");
  setTimeout(() => signalGroup("SIGKILL"), TETHER_GRACE_MS).unref();
}

function signalGroup(signal: NodeJS.Signals): void {
  try {
    // local-os.ts starts this process detached, so it leads a group holding wrangler and workerd.
    process.kill(-process.pid, signal);
  } catch {
    // Not a group leader (started without `detached`): only the child is ours to stop.
    child.kill(signal);
  }
}

for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, stopGroup);
setInterval(() => {
  if (process.ppid !== parent) stopGroup();
}, TETHER_POLL_MS);
