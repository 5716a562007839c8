// Node-only: what a CLI run reads and writes. main() gets the process's; tests pass their own.
import type { Readable } from "node:stream";

export interface OutputStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  stdin: Readable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
}

/** The process's own streams and environment. stdin is opened only by a command that reads it. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    get stdin() {
      return process.stdin;
    },
    env: process.env,
  };
}

/** All of stdin as text. */
export async function readAll(stdin: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Secret material from stdin: from a terminal, asked for without echo; from a pipe, everything
 * with one trailing newline removed. Never from argv, where other users' `ps` would see it.
 */
export async function readSecret(io: CliIo, prompt: string): Promise<string> {
  if (!io.stdin.isTTY) return (await readAll(io.stdin)).replace(/\r?\n$/, "");
  io.stderr.write(prompt);
  const stdin = io.stdin as Readable & { setRawMode?(raw: boolean): void };
  stdin.setRawMode?.(true);
  stdin.setEncoding("utf8");
  try {
    let value = "";
    for await (const chunk of stdin) {
      for (const character of chunk as string) {
        if (character === "\r" || character === "\n") return value;
        if (character === "\u0003") throw new Error("interrupted");
        if (character === "\u007f") value = value.slice(0, -1);
        else value += character;
      }
    }
    return value;
  } finally {
    stdin.setRawMode?.(false);
    stdin.pause();
    io.stderr.write("\n");
  }
}
