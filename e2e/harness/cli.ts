import { execFile, spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const PACKAGE = resolve(import.meta.dirname, "..", "..", "packages", "iterate");

/** The `iterate` bin as `pnpm exec iterate` runs it in this workspace (TypeScript source). */
export const CLI_BIN = join(PACKAGE, "bin", "iterate.mjs");

/**
 * The CLI as it ships: the package compiled with its own build settings into a temporary folder
 * (dist/, bin/, package.json) beside the package's installed dependencies. Used by the CLI suite
 * and `pnpm bench`; `remove()` deletes the folder.
 */
export async function buildCli(): Promise<{ dir: string; bin: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "iterate-cli-built-"));
  const tsc = join(resolve(createRequire(join(PACKAGE, "package.json")).resolve("typescript/package.json"), ".."), "bin", "tsc");
  await promisify(execFile)(process.execPath, [tsc, "-p", join(PACKAGE, "tsconfig.build.json"), "--outDir", join(dir, "dist"), "--declaration", "false"]);
  cpSync(join(PACKAGE, "bin"), join(dir, "bin"), { recursive: true });
  cpSync(join(PACKAGE, "package.json"), join(dir, "package.json"));
  symlinkSync(join(PACKAGE, "node_modules"), join(dir, "node_modules"));
  return { dir, bin: join(dir, "bin", "iterate.mjs"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

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

export interface CliRunner {
  /** Starts the CLI as a subprocess (for commands that follow, like `streams tail`). */
  start(args: string[], env: Record<string, string | undefined>): ChildProcess;
  /** Runs the CLI to its end with `stdin` as its input. */
  run(args: string[], env: Record<string, string | undefined>, stdin?: string): Promise<CliResult>;
}

/** Runs the bin at `bin` (CLI_BIN, or a `buildCli()` one) as subprocesses. */
export function cliRunner(bin: string): CliRunner {
  const start = (args: string[], env: Record<string, string | undefined>) =>
    spawn(process.execPath, [bin, ...args], { env: cliEnv(env), stdio: ["pipe", "pipe", "pipe"] });
  return { start, run: (args, env, stdin = "") => finished(start(args, env), stdin) };
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
