import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The `iterate` bin as `pnpm exec iterate` runs it in this workspace. */
export const CLI_BIN = resolve(import.meta.dirname, "..", "..", "packages", "iterate", "bin", "iterate.mjs");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A fresh config folder (XDG_CONFIG_HOME), so no test sees another's profiles. */
export function freshConfig(): string {
  return mkdtempSync(join(tmpdir(), "iterate-cli-e2e-"));
}

/**
 * The environment a CLI run sees: this process's PATH and HOME, nothing of the caller's iterate
 * settings, then `env` on top.
 */
export function cliEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, XDG_CONFIG_HOME: freshConfig() };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete base[name];
    else base[name] = value;
  }
  return base;
}

/** Starts the CLI as a subprocess (for commands that follow, like `streams tail`). */
export function startCli(args: string[], env: Record<string, string | undefined>, cwd?: string): ChildProcess {
  return spawn(process.execPath, [CLI_BIN, ...args], { env: cliEnv(env), stdio: ["pipe", "pipe", "pipe"], cwd });
}

/** Runs the CLI to its end with `stdin` as its input. */
export function runCli(args: string[], env: Record<string, string | undefined>, stdin = ""): Promise<CliResult> {
  const child = startCli(args, env);
  return finished(child, stdin);
}

/** Collects a started CLI's output until it exits. */
export function finished(child: ChildProcess, stdin?: string): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  if (stdin !== undefined) child.stdin?.end(stdin);
  return new Promise((done, fail) => {
    child.once("error", fail);
    child.once("close", (code) => done({ code, stdout, stderr }));
  });
}
