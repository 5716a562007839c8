/**
 * CORS and browser-safety headers for /streams. Any origin may call: every request carries its
 * own bearer token (no ambient cookie is honoured across origins), so allowing the origin grants
 * nothing a page could not do with the token itself.
 */
const CORS_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, PUT, DELETE, HEAD, OPTIONS",
  "access-control-allow-headers":
    "authorization, content-type, if-none-match, Stream-Seq, Stream-TTL, Stream-Expires-At, Stream-Closed, Producer-Id, Producer-Epoch, Producer-Seq, Stream-Forked-From, Stream-Fork-Offset, Stream-Fork-Sub-Offset",
  "access-control-expose-headers":
    "Stream-Next-Offset, Stream-Cursor, Stream-Up-To-Date, Stream-Closed, Stream-TTL, Stream-Expires-At, Stream-SSE-Data-Encoding, Producer-Epoch, Producer-Seq, Producer-Expected-Seq, Producer-Received-Seq, etag, content-type, location, retry-after",
  "access-control-max-age": "600",
  "cross-origin-resource-policy": "cross-origin",
};

/**
 * Set on every response of this route, over whatever the answer carries. A stream's content type is
 * its creator's choice (a PUT may say `text/html`) and its body is served on the OS's own origin:
 * opened in a browser, it renders in a sandbox with no origin, no script and no subresources, so
 * it can never act as the OS's pages with a visitor's cookies.
 */
const SAFETY_HEADERS: Record<string, string> = {
  "content-security-policy": "sandbox; default-src 'none'",
  "x-content-type-options": "nosniff",
};

const ALL_HEADERS = { ...CORS_HEADERS, ...SAFETY_HEADERS };

/** The answer to a preflight: no credentials are needed to ask what is allowed. */
export function corsPreflight(): Response {
  return new Response(null, { status: 204, headers: ALL_HEADERS });
}

/** Headers for a response of this route: the CORS headers, then `headers`, then the safety headers over both. */
export function corsHeaders(headers: Record<string, string> = {}): Headers {
  // One conversion of one record: cheaper than setting each header on a built response.
  return new Headers({ ...CORS_HEADERS, ...headers, ...SAFETY_HEADERS });
}

/** `response` with the CORS and safety headers set, unless it was built with `corsHeaders`. */
export function withCors(response: Response): Response {
  if (response.headers.has("access-control-allow-origin")) return response;
  // Responses built here are mutable; one from elsewhere (an upstream fetch) would not be.
  for (const [name, value] of Object.entries(ALL_HEADERS)) response.headers.set(name, value);
  return response;
}
