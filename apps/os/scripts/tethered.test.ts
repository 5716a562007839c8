// node --test: the tether stops its command, and everything in the command's group, when the
// process that started it dies without a word (SIGKILL).
import { spawn } from "node:child_process";
import { strict as assert } from "node:assert";
import { test } from "node:test";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const TETHERED = join(dirname(fileURLToPath(import.meta.url)), "tethered.ts");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((done) => setTimeout(done, 100));
  }
  return check();
}

test("a tethered command outlives no starter killed with SIGKILL", async () => {
  // The starter: starts the tether detached (as local-os.ts does), prints the pids, then idles.
  const starter = `
    const { spawn } = require("node:child_process");
    const tether = spawn(process.execPath, [${JSON.stringify(TETHERED)}, process.execPath, "-e",
      "console.log('grandchild ' + process.pid); setInterval(() => {}, 1000)"], { detached: true, stdio: ["ignore", "pipe", "inherit"] });
    tether.stdout.on("data", (chunk) => process.stdout.write(chunk));
    console.log("tether " + tether.pid);
    setInterval(() => {}, 1000);`;
  const parent = spawn(process.execPath, ["-e", starter], { stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  parent.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  assert.ok(await until(() => /tether \d+/.test(output) && /grandchild \d+/.test(output), 15_000), `no pids in: ${output}`);
  const tether = Number(/tether (\d+)/.exec(output)?.[1]);
  const grandchild = Number(/grandchild (\d+)/.exec(output)?.[1]);
  assert.ok(alive(tether) && alive(grandchild));

  parent.kill("SIGKILL");
  try {
    assert.ok(await until(() => !alive(grandchild) && !alive(tether), 10_000), "the tethered command outlived its starter");
  } finally {
    for (const pid of [grandchild, tether]) if (alive(pid)) process.kill(pid, "SIGKILL");
  }
});

test("stopping the tether's group stops the command and the tether together", async () => {
  const tether = spawn(process.execPath, [TETHERED, process.execPath, "-e", "setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" });
  await new Promise((done) => setTimeout(done, 500));
  const exited = new Promise<number | null>((done) => tether.once("exit", (code) => done(code)));
  process.kill(-(tether.pid as number), "SIGTERM");
  assert.notEqual(await exited, undefined);
  assert.ok(!alive(tether.pid as number));
});
