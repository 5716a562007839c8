// The checks every road out applies before a byte is sent, as values: the OS's pipe
// (egress-pipe.ts) turns a refusal into an ItxError, the runner's direct road
// (runner/direct-egress.ts) into a coded Error. One module, so the two roads cannot drift apart.
// Imports nothing but other import-free modules: the runner is loaded without a bundler.
import { destinationRefusal, type PrivateAddressPolicy } from "./address-guard.ts";
import { PLACEHOLDER_MARKER } from "../secret/placeholder.ts";

/**
 * A request header that limits secret substitution to headers: the body is sent as written, even
 * when it spells a placeholder. Agents set it on model requests, whose bodies carry conversation
 * text that anyone could have written. Every road removes it before sending.
 */
export const SECRETS_IN_HEADERS_ONLY = "x-iterate-egress-secrets";

/** Why a request may not leave, as data (the caller throws it with its code). */
export interface EgressRefusal {
  code: "EGRESS_REFUSED";
  message: string;
  details: { host: string; reason: string } | { reason: string };
}

/** The scheme and destination checks: only http(s), and no private address the policy does not allow. */
export function requestRefusal(url: URL, policy: PrivateAddressPolicy): EgressRefusal | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { code: "EGRESS_REFUSED", message: `egress sends only http: and https: requests, not ${url.protocol}`, details: { reason: "scheme" } };
  }
  const refused = destinationRefusal(url, policy);
  if (refused) return { code: "EGRESS_REFUSED", message: `egress to ${refused.host} is refused: ${refused.reason}`, details: refused };
  return undefined;
}

const MARKER = PLACEHOLDER_MARKER.toLowerCase();
const MARKER_BYTES = [...MARKER].map((char) => char.charCodeAt(0));

/**
 * Whether the pipe could find a placeholder anywhere in this request: the marker word in any case,
 * in the URL (raw and percent-decoded), a header name or value, or the body's bytes. A strict
 * superset of what the pipe substitutes (the exact spelling, in header values and UTF-8 text
 * bodies): the marker is ASCII, so no UTF-8 decoding can make it appear where its bytes are not,
 * and a request that merely mentions it takes the pipe too, which costs time and nothing else.
 */
export function mayCarryPlaceholder(url: string, headers: Iterable<[string, string]>, body: ArrayBuffer | null): boolean {
  if (url.toLowerCase().includes(MARKER) || safeDecode(url).toLowerCase().includes(MARKER)) return true;
  for (const [name, value] of headers) {
    if (name.toLowerCase().includes(MARKER) || value.toLowerCase().includes(MARKER)) return true;
  }
  return body !== null && bytesHoldMarker(new Uint8Array(body));
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    // Not valid percent-encoding: the raw form was checked, and the pipe reads URLs as written.
    return text;
  }
}

// ASCII-case-insensitive search for the marker's bytes (a-z and A-Z differ in bit 0x20 only).
function bytesHoldMarker(bytes: Uint8Array): boolean {
  const first = MARKER_BYTES[0] as number;
  const last = bytes.length - MARKER_BYTES.length;
  for (let at = 0; at <= last; at++) {
    if (((bytes[at] as number) | 0x20) !== first) continue;
    let index = 1;
    while (index < MARKER_BYTES.length && ((bytes[at + index] as number) | 0x20) === MARKER_BYTES[index]) index++;
    if (index === MARKER_BYTES.length) return true;
  }
  return false;
}
