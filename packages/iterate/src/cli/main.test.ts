import { chmodSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { CliIo } from "./io.ts";
import { describe, expect, test, vi } from "vitest";
import { ERROR_CODES } from "../errors/index.ts";
import { EXIT_CODES, EXIT_USAGE } from "./exit-codes.ts";
import { parseCredentialRequest, parseRepoSpec } from "./commands/repo-commands.ts";
import { main } from "./main.ts";
import { profilesPath, readProfiles, writeProfile } from "./profiles.ts";
import { LOCAL_DEFAULT_ADMIN_SECRET, resolveTarget } from "./target.ts";
import { parseEvents } from "./commands/stream-commands.ts";
import { agentPath } from "./commands/agent-commands.ts";
import { describeFailure } from "./failure.ts";
import { forTerminal } from "./render.ts";


interface CapturedIo extends CliIo {
  out(): string;
  err(): string;
}

/** Captured stdout/stderr, `stdin` as given, and an environment whose config folder is new. */
function capturedIo(options: { stdin?: string; env?: Record<string, string | undefined>; tty?: boolean } = {}): CapturedIo {
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

describe("iterate (no OS needed)", () => {
  test("--version prints the package's version and exits 0", async () => {
    const io = capturedIo();
    expect(await main(["--version"], io)).toBe(0);
    expect(io.out().trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  test("help lists every command and says where credentials come from", async () => {
    const io = capturedIo();
    expect(await main(["help"], io)).toBe(0);
    for (const command of ["login", "whoami", "projects", "describe", "run", "call", "streams", "agents", "secrets", "tokens", "repo", "complete"]) {
      expect(io.out()).toContain(`  ${command}`);
    }
    expect(io.out()).toContain("ITERATE_ADMIN_SECRET");
  });

  test("no arguments prints help and exits with the usage code", async () => {
    const io = capturedIo();
    expect(await main([], io)).toBe(EXIT_USAGE);
    expect(io.out()).toContain("Usage: iterate");
  });

  test("a typo'd command is a usage error with a suggestion", async () => {
    const io = capturedIo();
    expect(await main(["strams", "read", "/x"], io)).toBe(EXIT_USAGE);
    expect(io.err()).toContain("Did you mean streams?");
  });

  test("a missing argument is a usage error naming it", async () => {
    const io = capturedIo();
    expect(await main(["projects", "create"], io)).toBe(EXIT_USAGE);
    expect(io.err()).toContain("missing required argument 'slug'");
  });

  test("a command that needs a project says how to name one, before connecting", async () => {
    const io = capturedIo({ env: { ITERATE_BASE_URL: "http://127.0.0.1:9" } });
    expect(await main(["run", "-"], io)).toBe(EXIT_USAGE);
    expect(io.err()).toBe("iterate: name a project: --project <slug>[:/path] (or set ITERATE_PROJECT)\n");
  });

  test("call's arguments must be JSON", async () => {
    const io = capturedIo();
    expect(await main(["call", "-p", "demo", "greet", "{nope"], io)).toBe(EXIT_USAGE);
    expect(io.err()).toContain("args must be JSON");
  });

  test("a remote OS without credentials is a usage error that says how to log in", async () => {
    const io = capturedIo();
    expect(await main(["whoami", "--base-url", "https://os.example.com"], io)).toBe(EXIT_USAGE);
    expect(io.err()).toContain("no credentials for https://os.example.com: run `iterate login");
  });

  test("--profile naming a profile that does not exist is a usage error", async () => {
    const io = capturedIo();
    expect(await main(["whoami", "--profile", "work"], io)).toBe(EXIT_USAGE);
    expect(io.err()).toContain('no profile "work"');
  });

  test("no OS at the URL: one line naming the URL and `pnpm dev`, exit code of UNAVAILABLE; --json adds the error as JSON", async () => {
    const io = capturedIo({ env: { ITERATE_BASE_URL: "http://127.0.0.1:9" } });
    expect(await main(["--json", "whoami"], io)).toBe(EXIT_CODES.UNAVAILABLE);
    expect(io.err()).toBe("iterate: no OS answers at http://127.0.0.1:9: is `pnpm dev` running? (or pass --base-url)\n");
    expect(JSON.parse(io.out())).toEqual({ error: { code: "UNAVAILABLE", message: expect.stringContaining("http://127.0.0.1:9") } });
  });

  test("login reads the secret from stdin only: an empty stdin is a usage error", async () => {
    const io = capturedIo({ stdin: "" });
    expect(await main(["login", "--base-url", "http://127.0.0.1:9"], io)).toBe(EXIT_USAGE);
    expect(io.err()).toContain("no secret on stdin");
  });

  test("repo clone needs <project slug>:<repo path>, and the credential helper answers only its own OS", async () => {
    const io = capturedIo();
    expect(await main(["repo", "clone", "/repos/config"], io)).toBe(EXIT_USAGE);
    expect(io.err()).toContain("<project slug>:<repo path>");
    expect(parseRepoSpec("site:/repos/web.git/")).toEqual({ project: "site", path: "/repos/web" });
    expect(parseCredentialRequest("protocol=http\nhost=127.0.0.1:8787\npath=git/x\n\n")).toEqual({ protocol: "http", host: "127.0.0.1:8787", path: "git/x" });
  });

  test("complete prints a shell completion script, and completes commands from the tree", async () => {
    // @bomb.sh/tab prints with console.log.
    const printed: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void printed.push(args.join(" ")));
    try {
      expect(await main(["complete", "bash"], capturedIo())).toBe(0);
      expect(printed.join("\n")).toContain("# bash completion for iterate");
      printed.length = 0;
      expect(await main(["complete", "--", "streams", ""], capturedIo())).toBe(0);
      expect(printed.map((line) => line.split("\t")[0])).toEqual(expect.arrayContaining(["read", "tail", "append"]));
    } finally {
      spy.mockRestore();
    }
  });

  test("docs/cli.md's exit-code table is the one the CLI uses", () => {
    const doc = readFileSync(new URL("../../../../docs/cli.md", import.meta.url), "utf8");
    const rows = [...doc.matchAll(/^\| (\d+) \| ([A-Z_]+)\b/gm)].map(([, exit, code]) => [code, Number(exit)]);
    expect(Object.fromEntries(rows)).toEqual(EXIT_CODES);
  });

  test("every error code has its own exit code above the usage code", () => {
    const codes = Object.values(EXIT_CODES);
    expect(Object.keys(EXIT_CODES).toSorted()).toEqual(Object.keys(ERROR_CODES).toSorted());
    expect(new Set(codes).size).toBe(codes.length);
    expect(Math.min(...codes)).toBeGreaterThan(EXIT_USAGE);
  });
});

describe("credentials", () => {
  test("precedence: flag and env over the profile; a profile's secret only for its own URL; the local default only on loopback", () => {
    const { env } = capturedIo();
    writeProfile(env, "default", { baseUrl: "https://os.example.com", auth: { type: "bearer", token: "from-profile" } });
    expect(resolveTarget({}, env)).toMatchObject({ baseUrl: "https://os.example.com", auth: { type: "bearer", token: "from-profile" }, authSource: "profile default" });
    expect(resolveTarget({}, { ...env, ITERATE_ADMIN_SECRET: "s" })).toMatchObject({ auth: { type: "admin-secret", secret: "s" }, authSource: "ITERATE_ADMIN_SECRET" });
    expect(resolveTarget({}, { ...env, ITERATE_TOKEN: "t" })).toMatchObject({ auth: { type: "bearer", token: "t" } });
    // Another OS never receives the profile's token.
    expect(resolveTarget({ baseUrl: "https://other.example.com/" }, env)).toMatchObject({ baseUrl: "https://other.example.com", auth: undefined });
    expect(resolveTarget({ baseUrl: "http://localhost:8788" }, env)).toMatchObject({
      local: true,
      auth: { type: "admin-secret", secret: LOCAL_DEFAULT_ADMIN_SECRET },
      authSource: "the local default secret",
    });
  });

  test("profiles are kept in the XDG config folder, readable by their owner only", () => {
    const { env } = capturedIo();
    const path = writeProfile(env, "work", { baseUrl: "http://127.0.0.1:1", auth: { type: "admin-secret", secret: "x" } });
    expect(path).toBe(profilesPath(env));
    expect(path.startsWith(String(env.XDG_CONFIG_HOME))).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(Object.keys(readProfiles(env))).toEqual(["work"]);
    writeProfile(env, "work", undefined);
    expect(readProfiles(env)).toEqual({});
  });

  test("a profiles file others can read is used, with a warning naming the fix", () => {
    const { env } = capturedIo();
    const path = writeProfile(env, "default", { baseUrl: "http://127.0.0.1:1", auth: { type: "admin-secret", secret: "x" } });
    chmodSync(path, 0o644);
    const warnings: string[] = [];
    expect(resolveTarget({}, env, (line) => warnings.push(line)).authSource).toBe("profile default");
    expect(warnings).toEqual([`${path} can be read by other users: run \`chmod 600 ${path}\``]);
  });
});

describe("argument parsing helpers", () => {
  test("events: one object, an array, or one per line; each needs a type", () => {
    expect(parseEvents('{"type":"a"}')).toEqual([{ type: "a" }]);
    expect(parseEvents('[{"type":"a"},{"type":"b","payload":1}]')).toHaveLength(2);
    expect(parseEvents('{"type":"a"}\n{"type":"b"}\n')).toEqual([{ type: "a" }, { type: "b" }]);
    expect(() => parseEvents('{"payload":1}')).toThrow(/needs a string "type"/);
    expect(() => parseEvents("")).toThrow(/no events/);
  });

  test("agent names: helper is /agents/helper; other absolute paths are refused", () => {
    expect(agentPath("helper")).toBe("/agents/helper");
    expect(agentPath("/agents/helper")).toBe("/agents/helper");
    expect(() => agentPath("/itx/helper")).toThrow(/under \/agents\//);
  });
});

describe("text from the OS on a terminal", () => {
  test("control characters but line breaks and tabs become U+FFFD: no escape sequence from a reply, an instruction or an error reaches the terminal", () => {
    const hostile = "ok\x1b]52;c;ZWNobyBwd25lZA==\x07 \x1b[2J\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ \x9b31m\x7f";
    const shown = forTerminal(`${hostile}\nline two\tcolumn`);
    expect([...shown].filter((char) => /\p{Cc}/u.test(char) && char !== "\n" && char !== "\t")).toEqual([]);
    expect(shown).toContain("\nline two\tcolumn");
    expect(shown.startsWith("ok\uFFFD]52;c;")).toBe(true);
    const failure = describeFailure(Object.assign(new Error(`denied \x1b[31mred\x1b[0m`), { code: "PERMISSION_DENIED" }), undefined);
    expect(failure.line).not.toContain("\x1b");
  });
});
