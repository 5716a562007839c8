// `BENCH_ONLY=cli`: the wall time of `iterate whoami`, a whole process, against a bare Node
// process that opens the same Cap'n Web socket and makes the same call.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { buildCli, CLI_BIN } from "@iterate/e2e/harness/cli";
import { interleave, report, reportTail, summarize } from "./stats.ts";
import type { BenchTarget } from "./target.ts";

const ROUNDS = 15;
const run = promisify(execFile);

// What a user's own script would do for the same answer: import capnweb, authenticate, describe.
const BARE = `import { newWebSocketRpcSession } from "capnweb";
const root = newWebSocketRpcSession(process.env.ITERATE_BASE_URL.replace(/^http/, "ws") + "/api");
const { principal } = await root.authenticate({ type: "admin-secret", secret: process.env.ITERATE_ADMIN_SECRET }).__describe();
console.log(principal.id);
root[Symbol.dispose]();
`;

/**
 * Times, interleaved: (a) the bare Node process; (b) the CLI as it ships (compiled to dist/ by the
 * package's own build settings, beside the package's dependencies); (c) the CLI as the workspace
 * runs it (`pnpm exec iterate`: TypeScript source, stripped by Node at load). Target: (b) <= 1.5x (a).
 */
export async function measureCli(target: BenchTarget): Promise<void> {
  const built = await buildCli();
  const dir = built.dir;
  try {
    // Beside the built package, so `capnweb` resolves to the same copy the CLI loads.
    writeFileSync(join(dir, "bare.mjs"), BARE);
    const env = { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: dir, ITERATE_BASE_URL: target.baseUrl, ITERATE_ADMIN_SECRET: target.adminSecret };
    const node = (args: string[]) => async () => {
      const { stdout } = await run(process.execPath, args, { env, cwd: dir });
      if (!stdout.includes("admin")) throw new Error(`unexpected output: ${stdout}`);
    };
    const series = {
      bare: node([join(dir, "bare.mjs")]),
      built: node([built.bin, "whoami"]),
      workspace: node([CLI_BIN, "whoami"]),
    };
    for (const warm of Object.values(series)) await warm();
    const samples = await interleave(ROUNDS, series);
    const bare = summarize(samples.bare).median;
    const compiled = summarize(samples.built).median;
    const workspace = summarize(samples.workspace).median;
    report("cli.a_bare_node_socket_whoami.median", bare, "ms");
    reportTail("cli.a_bare_node_socket_whoami", summarize(samples.bare));
    report("cli.b_iterate_whoami_built.median", compiled, "ms");
    reportTail("cli.b_iterate_whoami_built", summarize(samples.built));
    report("cli.c_iterate_whoami_workspace_source.median", workspace, "ms");
    reportTail("cli.c_iterate_whoami_workspace_source", summarize(samples.workspace));
    report("cli.b_over_a", compiled / bare, "x (target <= 1.5)");
    report("cli.c_over_a", workspace / bare, "x");
  } finally {
    built.remove();
  }
}
