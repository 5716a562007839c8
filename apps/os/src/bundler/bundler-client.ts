// The OS's side of the BUNDLER service binding: one build, with the OS's own deadline, and the
// bundler's answer checked before anything trusts it (the bundler parses untrusted source).
import { env } from "cloudflare:workers";
import { ItxError, errorMessage } from "iterate/errors";
import { raceDeadline } from "../limits/deadline.ts";
import { unwrapCoded } from "../api/coded-result.ts";
import { LIMITS, limitDetails } from "../limits.ts";
import type { Bundle, BundleAnswer, BundleRequest } from "./bundler-protocol.ts";

/**
 * Builds `request` in the bundler Worker. Throws the bundler's coded failure (INVALID_ARGUMENT
 * with `reason: "build-failed"` for source that does not build), TIMEOUT past BUNDLE_WAIT_MS,
 * UNAVAILABLE when the bundler cannot be reached (transient: a creation step retries it).
 */
export async function bundleRemotely(request: BundleRequest): Promise<Bundle> {
  const bundler = env.BUNDLER;
  let answer: BundleAnswer | "timeout";
  try {
    answer = await raceDeadline(Promise.resolve(bundler.bundle(request)), LIMITS.BUNDLE_WAIT_MS, () => "timeout" as const);
  } catch (error) {
    throw new ItxError("UNAVAILABLE", `the bundler did not answer: ${errorMessage(error).slice(0, 200)}`, { details: { reason: "bundler-unreachable" } });
  }
  if (answer === "timeout") {
    throw new ItxError("TIMEOUT", `the bundler did not answer within ${LIMITS.BUNDLE_WAIT_MS} ms`, { details: { ...limitDetails("BUNDLE_WAIT_MS"), timeoutMs: LIMITS.BUNDLE_WAIT_MS } });
  }
  return checkedBundle(unwrapCoded(answer));
}

/** The bundler's answer crossed a trust boundary: only its expected shape, within BUNDLE_OUTPUT_MAX_CHARS, goes on. */
export function checkedBundle(bundle: unknown): Bundle {
  const { mainModule, modules } = (bundle ?? {}) as Partial<Bundle>;
  if (typeof mainModule !== "string" || typeof modules !== "object" || modules === null || !(mainModule in modules)) {
    throw new ItxError("INTERNAL", "the bundler answered something that is not a bundle");
  }
  let chars = 0;
  for (const [name, module] of Object.entries(modules)) {
    if (typeof module !== "string") throw new ItxError("INTERNAL", "the bundler answered a module that is not text");
    chars += name.length + module.length;
  }
  if (chars > LIMITS.BUNDLE_OUTPUT_MAX_CHARS) {
    throw new ItxError("RESOURCE_EXHAUSTED", `the bundle is bigger than ${LIMITS.BUNDLE_OUTPUT_MAX_CHARS} characters`, { details: limitDetails("BUNDLE_OUTPUT_MAX_CHARS") });
  }
  return { mainModule, modules };
}
