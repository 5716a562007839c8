import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, expect, test } from "vitest";
import { target } from "../harness/os.ts";

const REPO = resolve(import.meta.dirname, "..", "..");
const work = mkdtempSync(join(tmpdir(), "iterate-pack-"));
const app = join(work, "app");
// A Node older than 22 on this machine (the system's), if any.
const oldNode = ["/usr/bin/node", "/usr/local/bin/node"].find(
  (node) => existsSync(node) && Number(execFileSync(node, ["--version"], { encoding: "utf8" }).slice(1).split(".")[0]) < 22,
);
afterAll(() => rmSync(work, { recursive: true, force: true }));

// The SDK must work from a user's own project outside the monorepo: pack it, npm install the
// tarball into an empty folder, and run a plain Node script against the OS under test.
test("the packed iterate tarball installs and connects from a folder outside the repo", { timeout: 180_000 }, () => {
  const packDir = join(work, "pack");
  execFileSync("pnpm", ["--filter", "iterate", "pack", "--pack-destination", packDir], { cwd: REPO, stdio: "pipe" });
  const tarball = readdirSync(packDir).find((name) => name.endsWith(".tgz"));
  expect(tarball).toBeDefined();

  execFileSync("mkdir", ["-p", app]);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "user-app", private: true, type: "module" }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", join(packDir, tarball ?? "")], {
    cwd: app,
    stdio: "pipe",
  });
  writeFileSync(
    join(app, "script.mjs"),
    `import { connectItx, errorCode } from "iterate/client";
const session = connectItx({ baseUrl: process.env.BASE_URL, auth: { type: "admin-secret", secret: process.env.SECRET } });
const { principal } = await session.__describe();
const wrong = connectItx({ baseUrl: process.env.BASE_URL, auth: { type: "admin-secret", secret: "wrong" } });
const code = await wrong.__describe().then(() => "none", (error) => errorCode(error));
console.log(JSON.stringify({ principal, code }));
session[Symbol.dispose]();
wrong[Symbol.dispose]();
`,
  );
  const { baseUrl, adminSecret } = target();
  const output = execFileSync(process.execPath, ["script.mjs"], {
    cwd: app,
    env: { ...process.env, BASE_URL: baseUrl, SECRET: adminSecret },
    encoding: "utf8",
  });
  expect(JSON.parse(output.trim())).toEqual({ principal: { kind: "admin", id: "admin" }, code: "UNAUTHENTICATED" });

  // The CLI ships in the same tarball.
  const cli = execFileSync(process.execPath, [join(app, "node_modules", "iterate", "bin", "iterate.mjs"), "whoami", "--base-url", baseUrl, "--json"], {
    cwd: app,
    env: { ...process.env, ITERATE_ADMIN_SECRET: adminSecret },
    encoding: "utf8",
  });
  expect(JSON.parse(cli.trim())).toMatchObject({ principal: { kind: "admin", id: "admin" }, baseUrl });

});

// Runs after the test above, in the folder it installed the tarball into.
test.skipIf(oldNode === undefined)("on a Node without WebSocket (before 22) the packed client says it needs Node 22", () => {
  writeFileSync(
    join(app, "old-node.mjs"),
    `import { connectItx } from "iterate/client";
try { connectItx({ baseUrl: process.env.BASE_URL, auth: { type: "admin-secret", secret: "x" } }); } catch (error) { console.log(error.code, error.message); }
`,
  );
  const said = execFileSync(oldNode as string, ["old-node.mjs"], { cwd: app, env: { ...process.env, BASE_URL: target().baseUrl }, encoding: "utf8" });
  expect(said).toMatch(/^UNAVAILABLE \[UNAVAILABLE\] iterate needs Node 22 or later \(this is Node \d+\./);
});
