import { ItxError } from "iterate/errors";
import { LIMITS } from "../limits.ts";

// The browser's session cookie: `<sessionId>.<expiresAt>.<signature>`, the signature an
// HMAC-SHA256 (base64url) of the first two parts. The key is derived from ITERATE_SESSION_KEY
// and the admin secret together, so rotating either one ends every browser session. The cookie
// names a session record (browser-session-registry.ts); it carries no principal of its own.

/** How long a browser session lasts after sign-in (a token's own expiry ends it sooner). */
export const BROWSER_SESSION_TTL_SECONDS = 12 * 3600;

const encoder = new TextEncoder();

/** The cookie's name: `__Host-` on https, where the browser then insists on Secure, Path=/ and no Domain. */
export function cookieName(url: URL): string {
  return url.protocol === "https:" ? "__Host-iterate_session" : "iterate_session";
}

/**
 * The key cookies are signed with, or UNAVAILABLE. There is no built-in default: a deployment
 * without ITERATE_SESSION_KEY refuses browser sign-in rather than sign cookies under a key anyone
 * can read in this repository. Only the local runner (scripts/local-os.ts) supplies one.
 */
export async function cookieKey(env: { ITERATE_SESSION_KEY?: string | undefined; ITERATE_ADMIN_SECRET?: string | undefined }): Promise<CryptoKey> {
  const key = env.ITERATE_SESSION_KEY;
  if (typeof key !== "string" || key === "") {
    throw new ItxError("UNAVAILABLE", "browser sign-in is unavailable: this deployment has no ITERATE_SESSION_KEY (wrangler secret put ITERATE_SESSION_KEY)", {
      details: { missing: "ITERATE_SESSION_KEY" },
    });
  }
  const material = JSON.stringify(["iterate session cookies v1", key, env.ITERATE_ADMIN_SECRET ?? ""]);
  return crypto.subtle.importKey("raw", encoder.encode(material), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

/** A fresh session id: `bs_` and 24 random base-32 characters. */
export function mintSessionId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `bs_${Array.from(bytes, (byte) => alphabet[byte % 32]).join("")}`;
}

/** The cookie's value for a session. */
export async function signCookie(key: CryptoKey, sessionId: string, expiresAt: number): Promise<string> {
  const body = `${sessionId}.${expiresAt}`;
  const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(body)));
  return `${body}.${base64url(signature)}`;
}

const COOKIE_VALUE = /^(bs_[a-z2-7]{24})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/** The session a cookie value names, or undefined when it is malformed, forged or expired. */
export async function verifyCookie(key: CryptoKey, value: string): Promise<{ sessionId: string; expiresAt: number } | undefined> {
  if (value.length > LIMITS.SESSION_COOKIE_MAX_LENGTH) return undefined;
  const match = COOKIE_VALUE.exec(value);
  if (!match) return undefined;
  const [, sessionId, expiry, signature] = match as unknown as [string, string, string, string];
  const signatureBytes = fromBase64url(signature);
  if (!signatureBytes || base64url(signatureBytes) !== signature) return undefined;
  if (!(await crypto.subtle.verify("HMAC", key, signatureBytes, encoder.encode(`${sessionId}.${expiry}`)))) return undefined;
  const expiresAt = Number(expiry);
  if (expiresAt * 1000 <= Date.now()) return undefined;
  return { sessionId, expiresAt };
}

/** The session cookie's value in a request's Cookie header, if it sent one. */
export function readCookie(request: Request): string | undefined {
  const header = request.headers.get("cookie");
  if (header === null || header.length > LIMITS.COOKIE_HEADER_MAX_LENGTH) return undefined;
  const name = cookieName(new URL(request.url));
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The Set-Cookie line that stores `value` (or clears the cookie when undefined). HttpOnly: page
 * script never sees it. SameSite=Strict: no other site's page makes the browser send it.
 */
export function setCookieHeader(url: URL, value: string | undefined, maxAgeSeconds = 0): string {
  const attributes = ["Path=/", "HttpOnly", "SameSite=Strict", `Max-Age=${value === undefined ? 0 : maxAgeSeconds}`];
  if (url.protocol === "https:") attributes.push("Secure");
  return [`${cookieName(url)}=${value ?? ""}`, ...attributes].join("; ");
}

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64url(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}
