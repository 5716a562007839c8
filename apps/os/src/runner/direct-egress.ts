// The runner's direct road out (decision 0017): a loaded isolate's bare fetch() that carries no
// secret placeholder, from a call whose context shadows no `fetch`, leaves from the runner itself
// instead of crossing into the OS and back. Everything else takes the OS's pipe, as before.
//
// Loaded without a bundler: imports only import-free modules the OS's pipe uses too, so the scheme
// and address checks and the placeholder test are the pipe's own code, not a copy.
import { privateAddressPolicy, type PrivateAddressPolicy } from "../egress/address-guard.ts";
import { markEgress, mayCarryPlaceholder, requestRefusal } from "../egress/egress-rules.ts";
import type { DirectEgressVerdict } from "./runner-protocol.ts";

/**
 * The verdicts of the calls in flight and the floor below which none holds. Kept in the runner
 * Worker's memory (the loaded code has no way to it: its only ways out are this Worker's loopback
 * entrypoints, which take the isolate's id from their own props).
 */
export class DirectEgressVerdicts {
  #floor = 0;

  /** Voids every verdict older than `floor`, also of calls that have not arrived yet. */
  revoke(floor: number): void {
    if (Number.isFinite(floor) && floor > this.#floor) this.#floor = floor;
  }

  /**
   * Whether a request of an isolate may leave directly: every call in flight in it holds a
   * verdict (an isolate serves the concurrent calls of one scope; the strictest one decides),
   * none older than the floor, each made under the policy this runner enforces.
   */
  allows(verdicts: Iterable<DirectEgressVerdict | undefined>, policy: string): boolean {
    let any = false;
    for (const verdict of verdicts) {
      if (!verdict || verdict.epoch < this.#floor || verdict.policy !== policy) return false;
      any = true;
    }
    return any;
  }
}

/** What a refusal looks like to the loaded code: the pipe's message and code, `[CODE] ` first (errors/itx-error.ts). */
function coded(refusal: { code: string; message: string; details: unknown }): Error {
  return Object.assign(new Error(`[${refusal.code}] ${refusal.message}`), { code: refusal.code, details: refusal.details });
}

const policies = new Map<string, PrivateAddressPolicy>();

function policyOf(value: string): PrivateAddressPolicy {
  let policy = policies.get(value);
  if (!policy) policies.set(value, (policy = privateAddressPolicy(value)));
  return policy;
}

/**
 * Sends `request` (its body already read: at most RUNNER_EGRESS_INLINE_MAX_BYTES) from this
 * process, with the pipe's checks, or answers undefined when it must take the pipe (it may carry
 * a placeholder). Throws EGRESS_REFUSED as the pipe would; nothing is sent then. Redirects are not
 * followed here: the loaded code's fetch() follows them through its globalOutbound, so every hop
 * is judged again. `network` (runner-process.ts) judges the address a name resolved to.
 */
export async function sendDirect(network: Fetcher, request: Request, body: ArrayBuffer | null, policy: string): Promise<Response | undefined> {
  const url = new URL(request.url);
  const rules = policyOf(policy);
  const refusal = requestRefusal(url, rules, request.headers);
  if (refusal) throw coded(refusal);
  if (mayCarryPlaceholder(request.url, request.headers)) return undefined;
  const hasBody = request.method !== "GET" && request.method !== "HEAD" && body !== null;
  const headers = new Headers(request.headers);
  markEgress(headers, rules);
  return network.fetch(url.toString(), { method: request.method, headers, body: hasBody ? body : null, redirect: "manual" });
}
