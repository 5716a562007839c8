#!/usr/bin/env node
// The `iterate` CLI. A packed install runs the compiled dist/; the workspace runs the source.
// Plain JavaScript that any Node parses, so an old Node hears what it lacks instead of failing
// on syntax or on a missing WebSocket.
import { existsSync } from "node:fs";

const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  process.stderr.write(`iterate needs Node 22 or later (this is Node ${process.versions.node})\n`);
  process.exit(1);
}
const compiled = new URL("../dist/cli/main.js", import.meta.url);
const { main } = await import(existsSync(compiled) ? compiled.href : new URL("../src/cli/main.ts", import.meta.url).href);
process.exitCode = await main(process.argv.slice(2));
// Whatever the command left open (a socket closing, stdin), the process ends soon after.
setTimeout(() => process.exit(), 2_000).unref();
