import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";

/** An absolute http(s) URL, or INVALID_ARGUMENT. The egress pipe judges the destination itself. */
export function parseRemoteUrl(value: unknown, what: string): string {
  if (typeof value !== "string" || value.length === 0 || value.length > LIMITS.REMOTE_URL_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `${what} takes a url: an absolute http(s) URL of at most ${LIMITS.REMOTE_URL_MAX_LENGTH} characters`, {
      details: limitDetails("REMOTE_URL_MAX_LENGTH"),
    });
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ItxError("INVALID_ARGUMENT", `${what} needs an absolute URL, got ${JSON.stringify(value.slice(0, 120))}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ItxError("INVALID_ARGUMENT", `${what} speaks http: and https: only`);
  return url.toString();
}

/**
 * Headers sent with every request of a remote client: names and values as strings. Values may
 * hold secret placeholders (`getSecret("/secrets/x")`); the egress pipe substitutes them.
 */
export function parseRemoteHeaders(value: unknown, what: string): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ItxError("INVALID_ARGUMENT", `${what}: headers is an object of strings`);
  const entries = Object.entries(value);
  if (entries.length > LIMITS.REMOTE_HEADERS_MAX) {
    throw new ItxError("INVALID_ARGUMENT", `${what}: at most ${LIMITS.REMOTE_HEADERS_MAX} headers`, { details: limitDetails("REMOTE_HEADERS_MAX") });
  }
  const headers: Record<string, string> = {};
  for (const [name, text] of entries) {
    if (typeof text !== "string") throw new ItxError("INVALID_ARGUMENT", `${what}: the header ${JSON.stringify(name)} is not a string`);
    try {
      new Headers().set(name, text);
    } catch {
      throw new ItxError("INVALID_ARGUMENT", `${what}: ${JSON.stringify(name.slice(0, 64))} is not a valid header`);
    }
    headers[name.toLowerCase()] = text;
  }
  return headers;
}

/** Refuses fields `what` does not take. */
export function refuseUnknownFields(input: object, known: readonly string[], what: string): void {
  const extra = Object.keys(input).filter((key) => !known.includes(key));
  if (extra.length > 0) throw new ItxError("INVALID_ARGUMENT", `${what} has no field(s) ${extra.slice(0, 5).join(", ")}`);
}
