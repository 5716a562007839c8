/** The admin secret `pnpm dev` uses when ITERATE_ADMIN_SECRET is unset: written in the README, so known to everyone. */
export const LOCAL_ADMIN_SECRET = "iterate-local-admin-secret";

// This machine's own names: what a browser on it, the CLI and Node scripts reach a local OS by.
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "localhost", "::1"]);

/**
 * Why this request may not reach an OS whose admin secret is the public local default, or
 * undefined when it may (or the secret is another). With that secret anyone who can send the OS a
 * request can be its admin (and sign bearer tokens), so only this machine's own clients may:
 *
 * - not a page of another site: a browser stamps its requests with `Origin` and `Sec-Fetch-Site`,
 *   which page script cannot set, and any site the developer visits could otherwise open
 *   `ws://127.0.0.1:8787/api` and authenticate with the known secret;
 * - not a name other than this machine's: a site whose DNS name is rebound to 127.0.0.1 makes its
 *   pages same-origin with what they reach, but its `Host` is still its own name.
 */
export function publicSecretRefusal(request: Request, adminSecret: string | undefined): string | undefined {
  if (adminSecret !== LOCAL_ADMIN_SECRET) return undefined;
  const host = hostOf(request);
  if (!LOOPBACK_HOSTS.has(host) && !host.endsWith(".localhost")) return `the host ${JSON.stringify(host.slice(0, 100))} is not this machine's`;
  // Following a link to the dashboard from another site is fine: a GET navigation reads nothing
  // back to that site and changes nothing. A form's POST navigation could run an /api batch.
  const navigation = request.headers.get("sec-fetch-mode") === "navigate" && (request.method === "GET" || request.method === "HEAD");
  if (navigation) return undefined;
  const url = new URL(request.url);
  const origin = request.headers.get("origin");
  const ownOrigin = `${url.protocol}//${request.headers.get("host") ?? url.host}`;
  if (origin !== null && origin !== ownOrigin && origin !== url.origin) return "the request comes from a page of another site";
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return "the request comes from a page of another site";
  return undefined;
}

/** The request's host name, lowercased, without its port or an IPv6 literal's brackets. */
function hostOf(request: Request): string {
  const host = (request.headers.get("host") ?? new URL(request.url).host).toLowerCase();
  if (host.startsWith("[")) return host.slice(1, host.indexOf("]"));
  return host.split(":")[0] ?? "";
}
