// Node-only: the runner's way out for its direct egress (src/runner/direct-egress.ts), a workerd
// network service whose allow and deny lists enforce the OS's EGRESS_ALLOW_PRIVATE_ADDRESSES on
// the address a name resolved to, at connect time. The URL check cannot see that a public-looking
// name resolves to 127.0.0.1 or 10.x; this can.
import { Miniflare, convertV4MiniflareOptions } from "miniflare";
import { networkFilterOf, privateAddressPolicy } from "../src/egress/address-guard.ts";

/** The runner's NETWORK binding and DIRECT_EGRESS_POLICY for `policy`, or nothing when the filter cannot express it. */
export function runnerNetworkBindings(policy: string): { bindings: { DIRECT_EGRESS_POLICY?: string }; serviceBindings: { NETWORK?: { network: { allow: string[]; deny: string[] } } } } {
  const network = networkFilterOf(privateAddressPolicy(policy));
  return network ? { bindings: { DIRECT_EGRESS_POLICY: policy }, serviceBindings: { NETWORK: { network } } } : { bindings: {}, serviceBindings: {} };
}

/**
 * Test support: fetches each URL through a NETWORK binding made exactly as the runner's, in a
 * workerd of its own, and answers each outcome ("sent <status>" or "failed: <message>").
 */
export async function probeRunnerNetwork(policy: string, urls: string[]): Promise<string[]> {
  const { serviceBindings } = runnerNetworkBindings(policy);
  if (!serviceBindings.NETWORK) throw new Error(`the policy ${JSON.stringify(policy)} has no network filter`);
  const script = `export default { async fetch(request, env) {
    const out = [];
    for (const url of await request.json()) {
      try { const response = await env.NETWORK.fetch(url, { redirect: "manual" }); await response.arrayBuffer(); out.push("sent " + response.status); }
      catch (error) { out.push("failed: " + String(error && error.message)); }
    }
    return Response.json(out);
  } };`;
  const probe = new Miniflare(convertV4MiniflareOptions({ modules: true, script, compatibilityDate: "2026-08-01", serviceBindings }));
  try {
    const response = await probe.dispatchFetch("http://probe/", { method: "POST", body: JSON.stringify(urls) });
    return (await response.json()) as string[];
  } finally {
    await probe.dispose();
  }
}
