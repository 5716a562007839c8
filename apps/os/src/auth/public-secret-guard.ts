/** The admin secret `pnpm dev` uses when ITERATE_ADMIN_SECRET is unset: written in the README, so known to everyone. */
export const LOCAL_ADMIN_SECRET = "iterate-local-admin-secret";

// This machine's own names: what a browser on it, the CLI and Node scripts reach a local OS by.
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "localhost", "::1"]);

/**
 * Why this request may not reach an OS whose admin secret is the public local default, or
 * undefined when it may (or the secret is another). With that secret anyone who can send the OS a
 * request can be its admin (and sign bearer tokens), so only this machine's own clients may
 * present credentials:
 *
 * - not a page of a site elsewhere: a browser stamps its requests with `Origin`, which page
 *   script cannot set, and any site the developer visits could otherwise open
 *   `ws://127.0.0.1:8787/api` and authenticate with the known secret. Pages served from this
 *   machine (`http://localhost:5173`, the OS's own) may;
 * - not a name other than this machine's: a site whose DNS name is rebound to 127.0.0.1 makes its
 *   pages same-origin with what they reach, but its `Host` is still its own name.
 *
 * A request that cannot carry credentials is not held to it: a CORS preflight, and a GET or HEAD
 * with no `Authorization` and no `Upgrade` (the dashboard's files, a link followed from elsewhere).
 */
export function publicSecretRefusal(request: Request, adminSecret: string | undefined): string | undefined {
  if (adminSecret !== LOCAL_ADMIN_SECRET) return undefined;
  if (request.method === "OPTIONS") return undefined;
  const plainRead = (request.method === "GET" || request.method === "HEAD") && !request.headers.has("authorization") && !request.headers.has("upgrade");
  if (plainRead) return undefined;
  const host = hostOf(request.headers.get("host") ?? new URL(request.url).host);
  if (!isThisMachine(host)) return `the host ${JSON.stringify(host.slice(0, 100))} is not this machine's`;
  const origin = request.headers.get("origin");
  if (origin !== null && !isThisMachine(originHost(origin))) return `the request comes from a page of ${JSON.stringify(origin.slice(0, 100))}`;
  return undefined;
}

function isThisMachine(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || host.endsWith(".localhost");
}

/** The host of an `Origin` value, or "" for `null` and anything unparsable (an opaque origin is nobody's). */
function originHost(origin: string): string {
  try {
    return hostOf(new URL(origin).host);
  } catch {
    return "";
  }
}

/** A host name, lowercased, without its port or an IPv6 literal's brackets. */
function hostOf(hostAndPort: string): string {
  const host = hostAndPort.toLowerCase();
  if (host.startsWith("[")) return host.slice(1, host.indexOf("]"));
  return host.split(":")[0] ?? "";
}
