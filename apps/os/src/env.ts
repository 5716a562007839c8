import type { BenchDurableObject } from "./bench/bench-durable-object.ts";
import type { StreamDurableObject } from "./stream/stream-durable-object.ts";
import type { CapabilityHostDurableObject } from "./capability-host/capability-host-durable-object.ts";
import type { SecretDurableObject } from "./secret/secret-durable-object.ts";
import type { AgentDurableObject } from "./agent/agent-durable-object.ts";
import type { RepoDurableObject } from "./repo/repo-durable-object.ts";
import type { SchedulerDurableObject } from "./scheduler/scheduler-durable-object.ts";
import type { ProjectDurableObject } from "./project/project-durable-object.ts";
import type { RunnerBinding } from "./worker-loader/runner-client.ts";

/** The bindings and variables of the OS Worker (see wrangler.jsonc). */
export interface Env {
  /** The deployment's admin secret. Unset means the admin lanes refuse everyone. */
  ITERATE_ADMIN_SECRET?: string;
  /**
   * The key browser session cookies are signed with (with the admin secret). Unset: browser
   * sign-in fails with UNAVAILABLE; only the local runner supplies one.
   */
  ITERATE_SESSION_KEY?: string;
  /** "1" exposes the benchmark root at /api/bench. Only the bench harness sets it. */
  ITERATE_BENCH?: string;
  /** One Stream Durable Object per stream, named by its coordinate `<projectId>:<path>`. */
  STREAM: DurableObjectNamespace<StreamDurableObject>;
  /** One capability host per context, named `<projectId>:<path>`; also the context stream's processor host. */
  CAPABILITY_HOST_PROCESSORS: DurableObjectNamespace<CapabilityHostDurableObject>;
  /** One per secret, named `<projectId>:<path>`: encrypted material and its allowlist. */
  SECRET: DurableObjectNamespace<SecretDurableObject>;
  BENCH: DurableObjectNamespace<BenchDurableObject>;
  /** The root key secret material is encrypted under. Unset: secret operations fail with UNAVAILABLE. */
  ITERATE_SECRETS_KEY?: string;
  /** Private destinations egress may reach: "" none, "loopback" this machine, "1" all, or a comma list of hosts. */
  EGRESS_ALLOW_PRIVATE_ADDRESSES?: string;
  /** How long a Durable Streams long-poll or SSE wait holds, in ms (default 20000; the e2e harness sets 2000). */
  STREAMS_LIVE_WAIT_MS?: string;
  LOADER: WorkerLoader;
  /** The dashboard's static assets (wrangler.jsonc `assets`). */
  ASSETS?: Fetcher;
  /** The MCP server `itx.mcp.exa` connects to (default Exa's public one); tests point it at loopback. */
  MCP_EXA_URL?: string;
  /**
   * The runner: a separate workerd process that loads untrusted code, bound only by the local OS
   * (apps/os/scripts/local-os.ts), where workerd enforces no CPU or memory limit. Absent in a
   * deployment and in the workerd tests: untrusted code then loads through LOADER, with `limits`.
   */
  RUNNER?: RunnerBinding;
  /** One repository per object, named `<projectId>:<path>`: git objects and refs in its SQLite. */
  REPO: DurableObjectNamespace<RepoDurableObject>;
  /** One agent processor host per agent, named `<projectId>:/agents/<name>`. */
  AGENT_PROCESSORS: DurableObjectNamespace<AgentDurableObject>;
  /** Project hosts are `<slug>.<PROJECT_INGRESS_BASE>` (default `localhost`); set it to the deployment's own domain. */
  PROJECT_INGRESS_BASE?: string;
  /** One Project processor host per project, named `<projectId>:/`: creation, the project worker. */
  PROJECT_PROCESSORS: DurableObjectNamespace<ProjectDurableObject>;
  /** One scheduler per context, named `<projectId>:<path>`: its schedules and the alarm that fires them. */
  SCHEDULER: DurableObjectNamespace<SchedulerDurableObject>;
  /** Workers AI: bound only in a Cloudflare deployment (agents' `workers-ai` provider). */
  AI?: { run(model: string, input: unknown): Promise<unknown> };
  /** The default model of agents created without `llm`: "workers-ai" (default) or "openai-compatible". */
  AGENT_LLM_PROVIDER?: string;
  AGENT_LLM_MODEL?: string;
  AGENT_LLM_BASE_URL?: string;
  /** A secret path holding the default provider's key, e.g. /secrets/openai. */
  AGENT_LLM_API_KEY_SECRET?: string;
}
