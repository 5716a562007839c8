#!/usr/bin/env node
// The `iterate` CLI. A packed install runs the compiled dist/; the workspace runs the source.
import { existsSync } from "node:fs";

const compiled = new URL("../dist/cli/main.js", import.meta.url);
const { main } = await import(existsSync(compiled) ? compiled.href : new URL("../src/cli/main.ts", import.meta.url).href);
process.exitCode = await main(process.argv.slice(2));
