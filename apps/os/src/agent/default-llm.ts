import { ItxError } from "iterate/errors";
import { llmConfigSchema, type LlmConfig } from "./agent-contract.ts";

/** The model an agent created without `llm` uses: Workers AI unless the deployment's vars say otherwise. */
export const DEFAULT_WORKERS_AI_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";

/**
 * The deployment's default model, from Worker vars: AGENT_LLM_PROVIDER ("workers-ai" or
 * "openai-compatible"), AGENT_LLM_MODEL, AGENT_LLM_BASE_URL and AGENT_LLM_API_KEY_SECRET (a
 * secret path such as /secrets/openai, never a key).
 */
export function defaultLlm(env: Env): LlmConfig {
  const provider = env.AGENT_LLM_PROVIDER ?? "workers-ai";
  const candidate =
    provider === "openai-compatible"
      ? {
          provider,
          baseUrl: env.AGENT_LLM_BASE_URL,
          model: env.AGENT_LLM_MODEL,
          ...(env.AGENT_LLM_API_KEY_SECRET ? { apiKey: env.AGENT_LLM_API_KEY_SECRET } : {}),
        }
      : { provider, model: env.AGENT_LLM_MODEL ?? DEFAULT_WORKERS_AI_MODEL };
  const parsed = llmConfigSchema.safeParse(candidate);
  if (!parsed.success) {
    throw new ItxError("UNAVAILABLE", `the deployment's default model (AGENT_LLM_* vars) is not usable: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`);
  }
  return parsed.data;
}
