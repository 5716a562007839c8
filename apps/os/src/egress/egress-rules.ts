// The checks every road out applies before a byte is sent, as values: the OS's pipe
// (egress-pipe.ts) turns a refusal into an ItxError, the runner's direct road
// (runner/direct-egress.ts) into a coded Error. One module, so the two roads cannot drift apart.
// Imports nothing but other import-free modules: the runner is loaded without a bundler.
import { destinationRefusal, type PrivateAddressPolicy } from "./address-guard.ts";
import { PLACEHOLDER_MARKER } from "../secret/placeholder.ts";

/** Why a request may not leave, as data (the caller throws it with its code). */
export interface EgressRefusal {
  code: "EGRESS_REFUSED";
  message: string;
  details: { host: string; reason: string } | { reason: string };
}

/**
 * The scheme and destination checks: only http(s), and no private address the policy does not
 * allow. While the policy lets egress reach private addresses (a local OS reaches this machine's
 * own servers), no request may upgrade its connection: the debuggers listening on this machine
 * (workerd's and wrangler's inspectors) are driven over a WebSocket, and a script that opened one
 * would run code inside the OS. A name can resolve to 127.0.0.1, so this does not depend on the host.
 */
export function requestRefusal(url: URL, policy: PrivateAddressPolicy, headers: Headers): EgressRefusal | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { code: "EGRESS_REFUSED", message: `egress sends only http: and https: requests, not ${url.protocol}`, details: { reason: "scheme" } };
  }
  const refused = destinationRefusal(url, policy);
  if (refused) return { code: "EGRESS_REFUSED", message: `egress to ${refused.host} is refused: ${refused.reason}`, details: refused };
  if (policy.kind !== "none" && headers.has("upgrade")) {
    return {
      code: "EGRESS_REFUSED",
      message: "egress opens no upgraded connection (a WebSocket) while private addresses are reachable (EGRESS_ALLOW_PRIVATE_ADDRESSES): this machine's debuggers listen on them",
      details: { reason: "upgrade" },
    };
  }
  return undefined;
}

/**
 * The header every request egress sends carries while the policy lets it reach private addresses
 * (a local OS): set last on both roads, over anything the code wrote. The OS Worker refuses a
 * request that carries it on the OS's own routes (`refusesEgressMark`), so code the OS runs cannot
 * use the local OS's API, sign-in or git over loopback (the local admin secret is a known word).
 * A name can resolve to 127.0.0.1, so the mark does not depend on the host either.
 */
export const EGRESS_MARK_HEADER = "x-iterate-egress";

/** Sets the egress mark on `headers` (a copy the road sends) when `policy` reaches private addresses. */
export function markEgress(headers: Headers, policy: PrivateAddressPolicy): void {
  if (policy.kind !== "none") headers.set(EGRESS_MARK_HEADER, "1");
}

/** Whether the OS, whose own egress follows `policy`, refuses `headers` on its routes: they carry the mark its egress sets. */
export function refusesEgressMark(headers: Headers, policy: PrivateAddressPolicy): boolean {
  return policy.kind !== "none" && headers.has(EGRESS_MARK_HEADER);
}

const MARKER = PLACEHOLDER_MARKER.toLowerCase();

/**
 * Whether the pipe could find a placeholder in this request: the marker word in any case, in the
 * URL (raw and percent-decoded) or a header name or value. A strict superset of what the pipe
 * substitutes (the exact spelling, in header values); a request that merely mentions the word takes
 * the pipe too, which costs time and nothing else. Bodies are not looked at: the pipe sends every
 * body as written, so one spelling a placeholder leaves the same way on either road.
 */
export function mayCarryPlaceholder(url: string, headers: Iterable<[string, string]>): boolean {
  if (url.toLowerCase().includes(MARKER) || safeDecode(url).toLowerCase().includes(MARKER)) return true;
  for (const [name, value] of headers) {
    if (name.toLowerCase().includes(MARKER) || value.toLowerCase().includes(MARKER)) return true;
  }
  return false;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    // Not valid percent-encoding: the raw form was checked, and the pipe reads URLs as written.
    return text;
  }
}
