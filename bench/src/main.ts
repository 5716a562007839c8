// `pnpm bench`: starts a local OS (or uses BASE_URL) and prints every figure as `name: value unit`.
import { measureAgents } from "./agents.ts";
import { measureBaselines } from "./baselines.ts";
import { measureCapabilities } from "./capabilities.ts";
import { measureCli } from "./cli.ts";
import { measureDashboard } from "./dashboard.ts";
import { measureDeploy } from "./deploy.ts";
import { measureDurableStreamsHttp } from "./durable-streams-http.ts";
import { measureEgress } from "./egress.ts";
import { measureMcp } from "./mcp.ts";
import { measureProcessors } from "./processors.ts";
import { measureProjects } from "./projects.ts";
import { measureRepos } from "./repos.ts";
import { measureRestart } from "./restart.ts";
import { measureScale } from "./scale.ts";
import { measureScheduler } from "./scheduler.ts";
import { measureScaleStream } from "./scale-stream.ts";
import { measureScripts } from "./scripts.ts";
import { measureStreams } from "./streams.ts";
import { measureWorkers } from "./workers.ts";
import { openTarget } from "./target.ts";

const target = await openTarget();
try {
  console.log(`# iterate benchmarks against ${target.baseUrl} (node ${process.version})`);
  const only = process.env.BENCH_ONLY?.split(",");
  // The CLI is timed as whole processes against each other and needs no baselines.
  if (!only || only.some((name) => name !== "cli")) {
    const baselines = await measureBaselines(target);
    if (!only || only.includes("streams")) await measureStreams(target, baselines);
    if (!only || only.includes("processors")) await measureProcessors(target);
    if (!only || only.includes("capabilities")) await measureCapabilities(target);
    if (!only || only.includes("scripts")) {
      await measureScripts(target, baselines);
      await measureEgress(target);
    }
    if (!only || only.includes("workers")) await measureWorkers(target);
    if (!only || only.includes("agents")) await measureAgents(target);
    if (!only || only.includes("scheduler")) await measureScheduler(target);
    if (!only || only.includes("deploy")) measureDeploy();
    if (!only || only.includes("repos")) await measureRepos(target, baselines);
    if (!only || only.includes("dshttp")) await measureDurableStreamsHttp(target);
    if (!only || only.includes("mcp")) await measureMcp(target);
    if (!only || only.includes("projects")) await measureProjects(target);
    // Slow (minutes, gigabytes of local state): only when named.
    if (only?.includes("scale-stream")) await measureScaleStream(target);
    // An OS of its own, stopped and started again (about a minute of set-up).
    if (!only || only.includes("restart")) await measureRestart();
    // Minutes of set-up: only when asked for by name.
    if (only?.includes("scale")) await measureScale(target);
  }
  if (!only || only.includes("cli")) await measureCli(target);
  if (!only || only.includes("dashboard")) await measureDashboard(target);
} finally {
  await target.close();
}
