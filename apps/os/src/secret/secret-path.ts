import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";
import { PLACEHOLDER } from "./placeholder.ts";


const PATH = /^\/secrets(\/[A-Za-z0-9_.~-]+)+$/;

/** A secret's path: `/secrets/<name>` (more segments allowed). */
export function parseSecretPath(path: unknown): string {
  if (typeof path !== "string" || path.length > 256 || !PATH.test(path) || path.split("/").some((segment) => segment === "." || segment === "..")) {
    throw new ItxError("INVALID_ARGUMENT", `a secret path looks like /secrets/<name>, got ${JSON.stringify(String(path).slice(0, 80))}`);
  }
  return path;
}

/** The `getSecret("/secrets/x")` placeholders in a text, by path. */
export function placeholdersIn(text: string): string[] {
  const paths = new Set<string>();
  for (const match of text.matchAll(PLACEHOLDER)) paths.add(match[1] as string);
  return [...paths];
}

/** Replaces every placeholder with its material. */
export function substitute(text: string, materials: ReadonlyMap<string, string>): string {
  return text.replace(PLACEHOLDER, (whole, path: string) => {
    const material = materials.get(path);
    if (material === undefined) return whole;
    // Inside a JSON string the material must be escaped the way the placeholder was.
    return whole.includes('\\"') ? JSON.stringify(material).slice(1, -1) : material;
  });
}

/** What a header value may hold, so what material may be: tab and the printable ASCII characters. */
export const PRINTABLE_ASCII = /^[\t\x20-\x7e]*$/;

/** Validates an update: material within its limit, an allowlist of absolute http(s) URLs. */
export function parseSecretUpdate(input: unknown): { material: string; urls: string[] } {
  if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "update takes { material, egress: { urls } }");
  const { material, egress, ...rest } = input as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `update has no field(s) ${Object.keys(rest).join(", ")}`);
  if (typeof material !== "string" || material.length === 0 || material.length > LIMITS.SECRET_MATERIAL_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `material is a string of 1-${LIMITS.SECRET_MATERIAL_MAX_LENGTH} characters`, {
      details: limitDetails("SECRET_MATERIAL_MAX_LENGTH"),
    });
  }
  // It is sent in a header value, which takes printable ASCII only (see egress-pipe.ts).
  if (!PRINTABLE_ASCII.test(material)) {
    throw new ItxError("INVALID_ARGUMENT", "material is printable ASCII (it is sent in a header value): no control characters, no text beyond ASCII", {
      details: { reason: "material-not-printable-ascii" },
    });
  }
  const urls = (egress as { urls?: unknown } | undefined)?.urls;
  if (!Array.isArray(urls) || urls.length === 0 || urls.length > LIMITS.SECRET_EGRESS_URLS_MAX) {
    throw new ItxError("INVALID_ARGUMENT", `egress.urls lists 1-${LIMITS.SECRET_EGRESS_URLS_MAX} URLs the secret may be sent to`, {
      details: limitDetails("SECRET_EGRESS_URLS_MAX"),
    });
  }
  const parsed = urls.map((url) => {
    let value: URL;
    try {
      value = new URL(String(url));
    } catch {
      throw new ItxError("INVALID_ARGUMENT", `egress.urls holds ${JSON.stringify(String(url).slice(0, 80))}, which is not a URL`);
    }
    if (value.protocol !== "https:" && value.protocol !== "http:") throw new ItxError("INVALID_ARGUMENT", "egress.urls must be http: or https: URLs");
    return value.toString();
  });
  return { material, urls: parsed };
}

/**
 * Whether `url` may carry a secret allowed for `allowlist`: same origin, and the allowed path itself
 * or a path below it. Below means past a `/`: `https://h/acme` allows `/acme` and `/acme/x`, never
 * `/acme-other` (on a shared host that is someone else's path).
 */
export function urlAllowed(url: URL, allowlist: readonly string[]): boolean {
  return allowlist.some((allowed) => {
    const entry = new URL(allowed);
    if (entry.origin !== url.origin) return false;
    const base = entry.pathname;
    return url.pathname === base || url.pathname.startsWith(base.endsWith("/") ? base : `${base}/`);
  });
}
