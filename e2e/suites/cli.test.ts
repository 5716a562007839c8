import { statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { EXIT_CODES, LOCAL_DEFAULT_ADMIN_SECRET } from "iterate/cli";
import type { IssuedToken, StreamEvent } from "iterate/types";
import { LOCAL_ADMIN_SECRET, freePort } from "@iterate/os/local-os";
import { buildCli, cliRunner, finished, freshConfig, type CliRunner } from "../harness/cli.ts";
import { test } from "../harness/fixtures.ts";
import { startModelServer, scriptReply } from "../harness/model-server.ts";
import { target } from "../harness/os.ts";

/** The CLI as an admin of the OS under test, through the environment. */
function asAdmin(extra: Record<string, string | undefined> = {}) {
  const { baseUrl, adminSecret } = target();
  return { ITERATE_BASE_URL: baseUrl, ITERATE_ADMIN_SECRET: adminSecret, ...extra };
}

/** A `--json` command's output; `T` is what the test knows it prints (the default makes it say). */
function json<T = unknown>(result: { stdout: string }): T {
  return JSON.parse(result.stdout) as T;
}

/** `--json` stream output: one event a line. */
const eventLines = (stdout: string) => stdout.trim().split("\n").map((line) => JSON.parse(line) as StreamEvent<string, { n?: number }>);

// The CLI as it ships (compiled), each command a process of its own. A test runs several
// processes in turn, so on a loaded machine it gets more than the suite's default time.
let built: Awaited<ReturnType<typeof buildCli>> | undefined;
let cli: CliRunner;
beforeAll(async () => {
  built = await buildCli();
  cli = cliRunner(built.bin);
}, 180_000);
afterAll(() => built?.remove());
const runCli: CliRunner["run"] = (...args) => cli.run(...args);
const startCli: CliRunner["start"] = (...args) => cli.start(...args);

describe("the iterate CLI against a running OS", { timeout: 120_000 }, () => {
  test("login keeps the credentials in a profile only its owner can read; whoami and --profile use it", async ({ os }) => {
    const { baseUrl, adminSecret } = os;
    const config = freshConfig();
    const env = { XDG_CONFIG_HOME: config, ITERATE_ADMIN_SECRET: undefined };
    const login = await runCli(["login", "--base-url", baseUrl, "--profile", "work", "--json"], env, `${adminSecret}\n`);
    expect(login.code, login.stderr).toBe(0);
    expect(json(login)).toMatchObject({ profile: "work", baseUrl, principal: { kind: "admin", id: "admin" } });
    const file = join(config, "iterate", "profiles.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(config, "iterate")).mode & 0o777).toBe(0o700);

    const whoami = await runCli(["whoami", "--profile", "work", "--json"], env);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(json(whoami)).toEqual({ principal: { kind: "admin", id: "admin" }, baseUrl, profile: "work", credentials: "profile work" });
    const human = await runCli(["whoami"], { ...env, ITERATE_PROFILE: "work" });
    expect(human.stdout).toBe(`admin (admin) at ${baseUrl}, credentials from profile work\n`);

    const missing = await runCli(["whoami", "--profile", "nobody"], env);
    expect([missing.code, missing.stderr]).toEqual([2, 'iterate: no profile "nobody": create it with `iterate login --profile nobody`\n']);

    // A wrong secret is checked before anything is stored.
    const wrong = await runCli(["login", "--base-url", baseUrl, "--profile", "bad"], env, "not-the-secret\n");
    expect(wrong.code).toBe(EXIT_CODES.UNAUTHENTICATED);
    expect(wrong.stderr).toMatch(new RegExp(`^iterate: ${baseUrl.replaceAll(".", "\\.")} refused the credentials from stdin: .*\\n$`));
    expect((await runCli(["whoami", "--profile", "bad"], env)).code).toBe(2);
  });

  test.skipIf(target().adminSecret !== LOCAL_ADMIN_SECRET)("with no credentials at all, an OS on this machine is reached with pnpm dev's default secret", async ({ os }) => {
    expect(LOCAL_DEFAULT_ADMIN_SECRET).toBe(LOCAL_ADMIN_SECRET);
    const result = await runCli(["whoami", "--json"], { ITERATE_BASE_URL: os.baseUrl });
    expect(result.code, result.stderr).toBe(0);
    expect(json(result)).toMatchObject({ principal: { id: "admin" }, credentials: "the local default secret" });
  });

  test("projects create and list; describe the session and a context", async ({ os, connect }) => {
    const slug = `cli-${Date.now().toString(36)}`;
    const created = await runCli(["projects", "create", slug, "--json"], asAdmin());
    expect(created.code, created.stderr).toBe(0);
    const { id } = json<{ id: string }>(created);
    expect(id).toMatch(/^prj_/);
    const list = await runCli(["projects", "list", "--json"], asAdmin());
    expect(json(list)).toContainEqual({ id, slug });
    const table = await runCli(["projects", "list"], asAdmin());
    expect(table.stdout).toMatch(new RegExp(`^${slug}\\s+${id}$`, "m"));

    expect(json(await runCli(["describe", "--json"], asAdmin()))).toMatchObject({ kind: "session", principal: { id: "admin" } });
    const itx = connect({ auth: os.admin, projectId: id });
    await itx.extend({ path: "/itx/child" });
    const context = json(await runCli(["describe", `${slug}:/itx/child`, "--json"], asAdmin()));
    expect(context).toMatchObject({ kind: "itx", projectId: id, path: "/itx/child" });
    const readable = await runCli(["describe", slug], asAdmin());
    expect(readable.stdout).toMatch(/^itx /);
    expect(readable.stdout).toContain("CAPABILITY");

    const taken = await runCli(["projects", "create", slug], asAdmin());
    expect(taken.code).not.toBe(0);
    expect(taken.stderr.split("\n")).toHaveLength(2); // one line, then the final newline
  });

  test("run a script from a file or stdin; call a capability with JSON arguments", async ({ project: { slug, itx } }) => {
    await itx.extend({ path: "/itx/here" });
    const fromStdin = await runCli(["run", "-", "-p", `${slug}:/itx/here`, "--json"], asAdmin(), "async (itx) => (await itx.whoami()).path");
    expect([fromStdin.code, json(fromStdin)]).toEqual([0, "/itx/here"]);
    const failing = await runCli(["run", "-", "-p", slug], asAdmin(), "async () => { throw new Error('nope') }");
    expect(failing.code).toBe(EXIT_CODES.SCRIPT_FAILED);
    expect(failing.stderr).toMatch(/^iterate: SCRIPT_FAILED: .*nope/);
    const missingFile = await runCli(["run", "/nonexistent/script.js", "-p", slug], asAdmin());
    expect(missingFile.code).toBe(2);

    // A live capability served by this test process, called by the CLI.
    await itx.provideCapability({ name: "greet", capability: { hello: (who: string, punctuation = "!") => `hello ${who}${punctuation}` } });
    const called = await runCli(["call", "greet.hello", '["ada", "?"]', "-p", slug, "--json"], asAdmin());
    expect([called.code, json(called)]).toEqual([0, "hello ada?"]);
    const oneArgument = await runCli(["call", "greet.hello", '"bob"'], asAdmin({ ITERATE_PROJECT: slug }));
    expect(oneArgument.stdout).toBe("hello bob!\n");
    const missing = await runCli(["call", "nothing.here", "-p", slug], asAdmin());
    expect(missing.code).toBe(EXIT_CODES.NOT_FOUND);
    const otherProject = await runCli(["call", "greet.hello", "-p", "no-such-project-at-all"], asAdmin());
    expect(otherProject.code).toBe(EXIT_CODES.NOT_FOUND);
  });

  test("streams: append (argument, stdin, --type), read, and tail following live with ephemeral events", async ({ project: { slug } }) => {
    const path = "/cli/orders";
    const env = asAdmin({ ITERATE_PROJECT: slug });
    expect((await runCli(["streams", "append", path, '{"type":"demo/placed","payload":{"n":1}}'], env)).code).toBe(0);
    expect((await runCli(["streams", "append", path], env, '{"type":"demo/placed","payload":{"n":2}}\n{"type":"demo/placed","payload":{"n":3}}\n')).code).toBe(0);
    const read = await runCli(["streams", "read", path, "--json"], env);
    const events = eventLines(read.stdout);
    expect(events.filter((e) => e.type === "demo/placed").map((e) => e.payload.n)).toEqual([1, 2, 3]);
    const beforeLast = events.at(-2) ?? expect.unreachable("streams read printed fewer than 2 events");
    const last = events.at(-1) ?? expect.unreachable("streams read printed no event");
    const limited = await runCli(["streams", "read", path, "--after", String(beforeLast.offset), "--limit", "5"], env);
    expect(limited.stdout).toBe(`#${last.offset} demo/placed (/) {"n":3}\n`);

    const tail = startCli(["streams", "tail", path, "--count", "2", "--json"], env);
    let seen = "";
    let told = "";
    tail.stdout?.on("data", (chunk: Buffer) => (seen += chunk.toString()));
    tail.stderr?.on("data", (chunk: Buffer) => (told += chunk.toString()));
    const ended = finished(tail);
    // Once subscribed, tail says so on stderr.
    await expect.poll(() => told, { timeout: 20_000 }).toContain(`following ${path} from offset ${last.offset}`);
    expect((await runCli(["streams", "append", path, "--type", "demo/typing", "--payload", '{"who":"ada"}', "--ephemeral"], env)).code).toBe(0);
    expect((await runCli(["streams", "append", path, "--type", "demo/placed", "--payload", '{"n":4}'], env)).code).toBe(0);
    const result = await ended;
    expect(result.code, result.stderr).toBe(0);
    const live = eventLines(seen);
    expect(live.map((e) => [e.type, e.ephemeral ?? false])).toEqual([
      ["demo/typing", true],
      ["demo/placed", false],
    ]);

    // Deployment-wide streams without --project (admin only).
    const global = await runCli(["streams", "append", `/cli-${Date.now()}`, "--type", "demo/x", "--json"], asAdmin());
    expect(json<StreamEvent[]>(global)[0]).toMatchObject({ type: "demo/x", offset: 1 });
  });

  test("agents: create, ask, and chat streaming the model's reply", async ({ project: { slug } }) => {
    const model = await startModelServer(() => scriptReply("async (itx) => { await itx.chat.sendMessage('hello from the agent'); }"));
    try {
      const env = asAdmin({ ITERATE_PROJECT: slug });
      const created = await runCli(["agents", "create", "helper", "--llm-base-url", model.baseUrl, "--model", "loopback", "--json"], env);
      expect([created.code, json(created)]).toEqual([0, expect.objectContaining({ path: "/agents/helper", created: true })]);
      const asked = await runCli(["agents", "ask", "helper", "hi there", "--timeout", "20000"], env);
      expect([asked.code, asked.stdout, asked.stderr]).toEqual([0, "hello from the agent\n", ""]);
      const chat = await runCli(["agents", "chat", "/agents/helper", "--timeout", "20000"], env, "first\nsecond\n");
      expect(chat.code, chat.stderr).toBe(0);
      // The model's reply streamed as it was written (its script), then the agent's message, twice.
      expect(chat.stdout.match(/\/agents\/helper> hello from the agent/g)).toHaveLength(2);
      expect(chat.stdout).toContain("itx.chat.sendMessage('hello from the agent')");
    } finally {
      await model.close();
    }
  });

  test("secrets set reads the material from stdin; tokens issue, authenticate, revoke", async ({ os, project: { slug } }) => {
    const env = asAdmin({ ITERATE_PROJECT: slug });
    const set = await runCli(["secrets", "set", "/secrets/api-key", "--egress-url", "https://api.example.com/", "--json"], env, "sk-from-stdin\n");
    expect([set.code, json(set)]).toEqual([0, { path: "/secrets/api-key", version: 1 }]);
    expect(set.stdout + set.stderr).not.toContain("sk-from-stdin");
    const described = json(await runCli(["describe", slug, "--json"], env));
    expect(JSON.stringify(described)).not.toContain("sk-from-stdin");

    const issued = await runCli(["tokens", "issue", "--principal", "laptop", "-p", slug, "--ttl", "600"], asAdmin());
    expect(issued.code, issued.stderr).toBe(0);
    const token = issued.stdout.trim();
    expect(issued.stderr).toContain("shown only now");
    const asToken = { ITERATE_BASE_URL: os.baseUrl, ITERATE_TOKEN: token };
    const whoami = await runCli(["whoami", "--json"], asToken);
    expect(json(whoami)).toMatchObject({ principal: { kind: "impersonated", id: "laptop" }, credentials: "ITERATE_TOKEN" });
    const list = json<IssuedToken[]>(await runCli(["tokens", "list", "--json"], asAdmin()));
    const row = list.find((t) => t.principal === "laptop" && !t.revokedAt) ?? expect.unreachable("tokens list shows no live laptop token");
    const revoked = await runCli(["tokens", "revoke", row.tokenId, "--json"], asAdmin());
    expect(json(revoked)).toEqual({ tokenId: row.tokenId, revoked: true });
    const after = await runCli(["whoami"], asToken);
    expect(after.code).toBe(EXIT_CODES.UNAUTHENTICATED);
    expect(after.stderr).toContain("refused the credentials from ITERATE_TOKEN");
  });

  test("errors are one line naming the URL and the likely cause, with the exit code of their error code", async ({ os }) => {
    const port = await freePort();
    const down = await runCli(["whoami"], { ITERATE_BASE_URL: `http://127.0.0.1:${port}` });
    expect([down.code, down.stderr]).toEqual([EXIT_CODES.UNAVAILABLE, `iterate: no OS answers at http://127.0.0.1:${port}: is \`pnpm dev\` running? (or pass --base-url)\n`]);
    // A path where no OS lives on a host that answers HTTP: the OS's own origin with a wrong prefix.
    const wrongPath = await runCli(["whoami"], asAdmin({ ITERATE_BASE_URL: `${os.baseUrl}/not-the-os` }));
    expect(wrongPath.code).toBe(EXIT_CODES.UNAVAILABLE);
    expect(wrongPath.stderr).toContain(`no OS answers at ${os.baseUrl}/not-the-os`);
    const badSecret = await runCli(["projects", "list"], asAdmin({ ITERATE_ADMIN_SECRET: "wrong" }));
    expect(badSecret.code).toBe(EXIT_CODES.UNAUTHENTICATED);
    expect(badSecret.stderr.trim().split("\n")).toHaveLength(1);
    const repo = await runCli(["repo", "clone", "/repos/config"], asAdmin());
    expect(repo.code).toBe(2);
    expect(repo.stderr).toContain("<project slug>:<repo path>");
  });
});

describe("iterate repo clone", { timeout: 120_000 }, () => {
  test("clones a project's repository with stock git; the clone pushes back through the CLI as its credential helper", async ({ os, project: { slug, itx } }) => {
    const { mkdtempSync, readFileSync, writeFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { execFileSync } = await import("node:child_process");
    const site = itx.repos.create({ path: "/repos/site" });
    await site.commit({ branch: "main", message: "first", files: { "index.html": "<h1>one</h1>" } });
    const folder = mkdtempSync(join(tmpdir(), "iterate-cli-repo-"));
    try {
      const clone = join(folder, "site");
      const cloned = await runCli(["repo", "clone", `${slug}:/repos/site`, clone], asAdmin());
      expect(cloned.code, JSON.stringify(cloned.stderr)).toBe(0);
      expect(readFileSync(join(clone, "index.html"), "utf8")).toBe("<h1>one</h1>");
      // No secret was written into the clone: it asks the CLI each time.
      const config = readFileSync(join(clone, ".git", "config"), "utf8");
      expect(config).not.toContain(os.adminSecret);
      expect(config).toContain("repo credential");
      writeFileSync(join(clone, "index.html"), "<h1>two</h1>");
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.name=Ada", "-c", "user.email=ada@example.com", ...args], { cwd: clone, env: { ...process.env, ...asAdmin(), GIT_TERMINAL_PROMPT: "0" }, stdio: "pipe" });
      git("commit", "-am", "second");
      git("push", "origin", "main");
      expect(await site.readFile({ ref: "main", path: "index.html" })).toBe("<h1>two</h1>");
      // With wrong credentials the OS refuses, and git (no prompt) fails instead of hanging.
      const denied = () =>
        execFileSync("git", ["fetch"], { cwd: clone, env: { ...process.env, ...asAdmin({ ITERATE_ADMIN_SECRET: "wrong-secret" }), GIT_TERMINAL_PROMPT: "0" }, stdio: "pipe" });
      expect(denied).toThrow(/Authentication failed|401|could not read/i);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

