// What `wrangler types` (worker-configuration.d.ts, generated from wrangler.jsonc) cannot know:
// secrets, bindings only some environments have, and variables a deployment may leave unset.
// Regenerate the rest with `pnpm --filter @iterate/os types`; `pnpm typecheck` fails when it is stale.

interface Env {
  /** The deployment's admin secret. Unset means the admin lanes refuse everyone. */
  ITERATE_ADMIN_SECRET?: string;
  /** The root key secret material is encrypted under. Unset: secret operations fail with UNAVAILABLE. */
  ITERATE_SECRETS_KEY?: string;
  /**
   * The key browser session cookies are signed with (with the admin secret). Unset: browser
   * sign-in fails with UNAVAILABLE; only the local runner supplies one.
   */
  ITERATE_SESSION_KEY?: string;
  /**
   * The runner: a separate workerd process that loads untrusted code, bound only by the local OS
   * (apps/os/scripts/local-os.ts), where workerd enforces no CPU or memory limit. Absent in a
   * deployment and in the workerd tests: untrusted code then loads through LOADER, with `limits`.
   */
  RUNNER?: import("./worker-loader/runner-client.ts").RunnerBinding;
  /** How long a Durable Streams long-poll or SSE wait holds, in ms (default 20000; the e2e harness sets 2000). */
  STREAMS_LIVE_WAIT_MS?: string;
  /** Project hosts are `<slug>.<PROJECT_INGRESS_BASE>` (default `localhost`); set it to the deployment's own domain. */
  PROJECT_INGRESS_BASE?: string;
  /** Workers AI: bound only in a Cloudflare deployment (agents' `workers-ai` provider). */
  AI?: { run(model: string, input: unknown): Promise<unknown> };
  /** The default model of agents created without `llm` (with AGENT_LLM_PROVIDER "openai-compatible"). */
  AGENT_LLM_MODEL?: string;
  AGENT_LLM_BASE_URL?: string;
  /** A secret path holding the default provider's key, e.g. /secrets/openai. */
  AGENT_LLM_API_KEY_SECRET?: string;
}
