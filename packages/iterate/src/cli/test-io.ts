// Test support: a CliIo over strings, with a fresh config folder.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { CliIo } from "./io.ts";

export interface CapturedIo extends CliIo {
  out(): string;
  err(): string;
}

/** Captured stdout/stderr, `stdin` as given, and an environment whose config folder is new. */
export function capturedIo(options: { stdin?: string; env?: Record<string, string | undefined>; tty?: boolean } = {}): CapturedIo {
  let out = "";
  let err = "";
  const stdin = Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]) as CliIo["stdin"];
  return {
    stdout: { write: (text: string) => (out += text), isTTY: options.tty ?? false },
    stderr: { write: (text: string) => (err += text), isTTY: options.tty ?? false },
    stdin,
    env: { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "iterate-cli-test-")), ...options.env },
    out: () => out,
    err: () => err,
  };
}
