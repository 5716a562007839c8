import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { describe, expect, inject } from "vitest";
import { connectItx } from "iterate/client";
import { connectIterate } from "iterate/node";
import { expectCode } from "iterate/stream/test-support";
import { firstScript } from "@iterate/os/dev-banner";
import { LOCAL_ADMIN_SECRET } from "@iterate/os/local-os";
import { CLI_BIN, cliEnv } from "../harness/cli.ts";
import { mounted, test } from "../harness/fixtures.ts";
import { disconnected, target } from "../harness/os.ts";

const REPO = resolve(import.meta.dirname, "..", "..");
const E2E = resolve(import.meta.dirname, "..");

/** Runs `source` as a plain .mjs inside e2e/ (where `iterate` resolves) with Node 22. */
function runMjs(source: string, env: Record<string, string | undefined>): string {
  const dir = mkdtempSync(join(E2E, ".onboarding-"));
  try {
    writeFileSync(join(dir, "hello.mjs"), source);
    return execFileSync(process.execPath, [join(dir, "hello.mjs")], { env: cliEnv(env), encoding: "utf8", timeout: 30_000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A Node older than 22 on this machine (the system's), or undefined. */
function oldNode(): string | undefined {
  for (const candidate of ["/usr/bin/node", "/usr/local/bin/node"]) {
    if (!existsSync(candidate)) continue;
    const version = execFileSync(candidate, ["--version"], { encoding: "utf8" }).trim();
    if (Number(version.slice(1).split(".")[0]) < 22) return candidate;
  }
  return undefined;
}

/** Members a user might misspell: typed here so the test can call them, and answered NOT_FOUND by the OS. */
interface Misspelt {
  projectz: { list(): unknown };
  projects: { lst(): unknown };
  streams: { get(path: string): { apend(event: { type: string }): unknown } };
}
const misspelt = (session: object) => mounted<Misspelt>(session);

describe("onboarding: what a new user tries first", () => {
  test.skipIf(target().adminSecret !== LOCAL_ADMIN_SECRET)(
    "the snippet `pnpm dev` prints runs in a plain .mjs on Node 22 with ITERATE_ADMIN_SECRET unset",
    ({ os }) => {
      const snippet = firstScript({ baseUrl: os.baseUrl, secretFromEnv: false });
      expect(snippet).not.toMatch(/\busing\b/);
      const output = runMjs(snippet, { ITERATE_ADMIN_SECRET: undefined });
      expect(output).toContain("kind: 'session'");
      expect(output).toContain("id: 'admin'");
    },
  );

  test("the snippet printed when ITERATE_ADMIN_SECRET is set reads it from the environment", ({ os }) => {
    const snippet = firstScript({ baseUrl: os.baseUrl, secretFromEnv: true });
    expect(snippet).toContain("process.env.ITERATE_ADMIN_SECRET");
    expect(runMjs(snippet, { ITERATE_ADMIN_SECRET: os.adminSecret })).toContain("kind: 'session'");
  });

  test.skipIf(oldNode() === undefined)("on Node before 22 the CLI says it needs Node 22 instead of failing on WebSocket", ({ os }) => {
    const node = oldNode() as string;
    let failure: { status: number; stderr: string } | undefined;
    try {
      execFileSync(node, [CLI_BIN, "whoami"], { env: cliEnv({ ITERATE_BASE_URL: os.baseUrl }), encoding: "utf8", stdio: "pipe" });
    } catch (error) {
      failure = error as { status: number; stderr: string };
    }
    expect(failure?.status).toBe(1);
    expect(failure?.stderr).toMatch(/^iterate needs Node 22 or later \(this is Node 2?\d\./);
    expect(failure?.stderr).not.toContain("WebSocket is not defined");
  });

  test("`pnpm exec iterate whoami` works at the repository's root", ({ os }) => {
    const { baseUrl, adminSecret } = os;
    const output = execFileSync("pnpm", ["exec", "iterate", "whoami", "--json"], {
      cwd: REPO,
      env: { ...cliEnv({ ITERATE_BASE_URL: baseUrl, ITERATE_ADMIN_SECRET: adminSecret }), PATH: process.env.PATH },
      encoding: "utf8",
    });
    expect(JSON.parse(output)).toMatchObject({ principal: { kind: "admin", id: "admin" }, baseUrl });
  });

  test("`await connectItx(...)` answers a handle whose dispose closes the connection (live capabilities end)", async ({ os, project: { projectId }, connect }) => {
    const { baseUrl, admin } = os;
    // connectItx itself, not the fixture: what awaiting it answers is what this test is about.
    const provider = await connectItx({ baseUrl, auth: admin, projectId });
    expect(typeof (provider as { then?: unknown }).then).toBe("undefined"); // awaiting it again answers it, not a new round trip
    await provider.provideCapability({ name: "clock", capability: () => 42 });
    const reader = connect<{ clock(): number }>({ auth: admin, projectId });
    expect(await reader.clock()).toBe(42);
    provider[Symbol.dispose]();
    await expect.poll(() => disconnected(reader.clock()), { timeout: 10_000 }).toBe(true);
    // A rejected await leaves nothing open to dispose.
    await expect(connectItx({ baseUrl, auth: { type: "admin-secret", secret: "wrong" } })).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
  });

  test("agent.stream works over Cap'n Web; connectItx({ agentPath }) is the agent's context; connectIterate as documented", async ({ os, admin: session, project: { projectId, slug }, connect }) => {
    const { baseUrl, admin } = os;
    const agent = session.projects.get(projectId).agents.get("/agents/reader");
    await agent.create();
    expect(await agent.stream.head()).toBeGreaterThan(0);
    const stream = await agent.stream;
    expect((await stream.getEvents({ afterOffset: 0 })).map((e) => e.type)).toContain("events.iterate.com/agent/created");

    const context = connect({ auth: admin, projectId, agentPath: "/agents/reader" });
    expect(await context.whoami()).toMatchObject({ projectId, path: "/agents/reader" });
    expect((await context.agent.__describe()).agent).toMatchObject({ created: true });
    expect(await context.agent.stream.head()).toBeGreaterThan(0);

    // As the docs show it: `using connection = await connectIterate(...)`, then `await` a project.
    using connection = await connectIterate({ baseUrl, auth: admin });
    using project = await connection.session.projects.get(slug);
    expect(await project.run("async (itx) => (await itx.whoami()).path")).toBe("/");
  });

  test("a wrong port or path names the URL; a typo'd member names what was called and what exists", async ({ os, admin: session }) => {
    const { baseUrl, admin } = os;
    // connectItx itself: the fixture always reaches the OS under test, this one must not.
    using wrongPath = connectItx({ baseUrl: `${baseUrl}/wrong`, auth: admin });
    const unreachable = await expectCode(wrongPath.__describe(), "UNAVAILABLE");
    expect(unreachable.message).toContain(`no iterate OS answers at ${baseUrl}/wrong`);

    const typos = misspelt(session);
    const typo = await expectCode(typos.projectz.list(), "NOT_FOUND");
    expect(typo.message).toContain('session has no member "projectz"');
    expect(typo.message).toContain("projects");
    const streamTypo = await expectCode(typos.streams.get("/typo").apend({ type: "demo/x" }), "NOT_FOUND");
    expect(streamTypo.message).toMatch(/stream has no member "apend"; it has: .*append/);
    const listTypo = await expectCode(typos.projects.lst(), "NOT_FOUND");
    expect(listTypo.message).toMatch(/projects has no member "lst"; it has: .*list/);
  });

  test.skipIf(inject("logPath") === "")("client disconnects and expected coded errors leave no error in the OS log", async ({ os, project: { projectId }, connect }) => {
    const logPath = inject("logPath");
    const before = statSync(logPath).size;
    const { baseUrl, admin } = os;
    {
      // connectItx itself: leaving this block is the client's disconnect under test.
      using session = connectItx({ baseUrl, auth: admin });
      await expectCode(session.projects.get("no-such-project-here").whoami(), "NOT_FOUND");
      await expectCode(misspelt(session).projectz.list(), "NOT_FOUND");
      await expectCode(session.streams.get("/quiet").getEvents({ limit: -1 }), "INVALID_ARGUMENT");
      // Leave with a live subscription, a pending wait and a live capability: a normal disconnect.
      const itx = session.projects.get(projectId);
      await itx.provideCapability({ name: "gone", capability: () => 1 });
      await itx.streams.get("/quiet").subscribe(() => undefined);
      void itx.waitForEvent({ type: "never/happens", timeoutMs: 60_000 }).catch(() => undefined);
      await new Promise((settle) => setTimeout(settle, 200));
    }
    const reader = connect<{ gone(): number }>({ auth: admin, projectId });
    await expect.poll(() => disconnected(reader.gone()), { timeout: 10_000 }).toBe(true);
    await new Promise((settle) => setTimeout(settle, 1_000));
    const added = readFileSync(logPath, "utf8").slice(before);
    expect(added).not.toMatch(/uncoded error|Uncaught|\[ERROR\]|could not disconnect|close callback failed/);
  });

  test("a second `pnpm dev` on a busy port fails with the port named, instead of reporting success", async () => {
    const busy = createServer();
    await new Promise<void>((listening) => busy.listen(0, "127.0.0.1", listening));
    const address = busy.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    try {
      const child = spawn(process.execPath, [join(REPO, "apps", "os", "scripts", "dev.ts"), "--port", String(port)], {
        env: cliEnv({}),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((exited) => child.once("exit", exited));
      expect(code).toBe(1);
      expect(stderr).toContain(`pnpm dev: port ${port} is already in use on 127.0.0.1`);
      expect(stdout).not.toContain("is running");
    } finally {
      await new Promise((closed) => busy.close(closed));
    }
  });
});
