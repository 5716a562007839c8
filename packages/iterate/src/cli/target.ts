import type { Credentials } from "../types.ts";
import { DEFAULT_PROFILE, readProfiles, type Profile } from "./profiles.ts";

/** Where `iterate` talks to when nothing says otherwise: the OS `pnpm dev` starts. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8787";

/**
 * The admin secret a local OS uses when ITERATE_ADMIN_SECRET is unset (apps/os/scripts/local-os.ts
 * defines the same; an e2e test keeps them equal). Only ever sent to a loopback address.
 */
export const LOCAL_DEFAULT_ADMIN_SECRET = "iterate-local-admin-secret";

/** The options every command takes. */
export interface GlobalOptions {
  baseUrl?: string;
  profile?: string;
  json?: boolean;
}

/** Which OS to talk to, how to authenticate, and where each came from (for messages). */
export interface Target {
  baseUrl: string;
  /** True for a loopback address: an OS on this machine, likely started with `pnpm dev`. */
  local: boolean;
  profile: string;
  auth: Credentials | undefined;
  /** Where the credentials came from, e.g. "ITERATE_ADMIN_SECRET" or "profile default". */
  authSource: string;
}

/**
 * Resolves the OS and the credentials, first match wins:
 * base URL: --base-url, ITERATE_BASE_URL, the profile's, DEFAULT_BASE_URL;
 * credentials: ITERATE_ADMIN_SECRET, ITERATE_TOKEN (or ITERATE_BEARER_TOKEN), the profile's (only
 * when the profile is for this same URL: a stored secret never goes to another OS), and for a
 * loopback URL the local default secret.
 */
export function resolveTarget(options: GlobalOptions, env: Record<string, string | undefined>, warn?: (line: string) => void): Target {
  const profileName = options.profile ?? nonEmpty(env.ITERATE_PROFILE) ?? DEFAULT_PROFILE;
  const profile: Profile | undefined = readProfiles(env, warn)[profileName];
  if (options.profile !== undefined && profile === undefined) {
    throw new UsageError(`no profile "${profileName}": create it with \`iterate login --profile ${profileName}\``);
  }
  const baseUrl = normalizeBaseUrl(options.baseUrl ?? nonEmpty(env.ITERATE_BASE_URL) ?? profile?.baseUrl ?? DEFAULT_BASE_URL);
  const local = isLoopback(baseUrl);
  const common = { baseUrl, local, profile: profileName };
  const secret = nonEmpty(env.ITERATE_ADMIN_SECRET);
  if (secret !== undefined) return { ...common, auth: { type: "admin-secret", secret }, authSource: "ITERATE_ADMIN_SECRET" };
  const token = nonEmpty(env.ITERATE_TOKEN) ?? nonEmpty(env.ITERATE_BEARER_TOKEN);
  if (token !== undefined) return { ...common, auth: { type: "bearer", token }, authSource: env.ITERATE_TOKEN ? "ITERATE_TOKEN" : "ITERATE_BEARER_TOKEN" };
  if (profile !== undefined && normalizeBaseUrl(profile.baseUrl) === baseUrl) {
    return { ...common, auth: profile.auth, authSource: `profile ${profileName}` };
  }
  if (local) return { ...common, auth: { type: "admin-secret", secret: LOCAL_DEFAULT_ADMIN_SECRET }, authSource: "the local default secret" };
  return { ...common, auth: undefined, authSource: "none" };
}

/** A mistake in how the CLI was called, found before any call to the OS (exit 2). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** `http://host:port/prefix` without a trailing slash; a usage error when it is no http(s) URL. */
export function normalizeBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`the base URL must be an absolute URL like ${DEFAULT_BASE_URL}, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`the base URL must use http: or https:, got ${url.protocol}`);
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** True for an OS on this machine (localhost, 127.x.x.x, [::1]). */
export function isLoopback(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname;
  return host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}
