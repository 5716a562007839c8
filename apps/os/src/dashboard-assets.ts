
// What every dashboard response carries, but the REPL's sandbox page. The CSP keeps the page to its own scripts and its own
// origin's /api (no CDN, nothing injected, no eval: the REPL sends its source to run on the OS as
// itx.run, or hands it to the sandbox below, and never evaluates it in the page; decision 0020).
// frame-ancestors stops other sites from framing the sign-in form. Referrer-Policy is
// same-origin, not no-referrer: under no-referrer the browser sends `Origin: null` even on the
// page's own POSTs, and /auth/* answers only its own Origin (auth/same-origin.ts).
const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
};

// The REPL's sandbox page (/repl-sandbox), which the dashboard frames with
// sandbox="allow-scripts" to run input "in the page" (decision 0020). Its own policy: eval is
// allowed here and only here; it may load its one script from this origin and nothing else (no
// connections, images, styles, frames, workers, forms). `sandbox allow-scripts` in the header
// keeps its origin opaque even when it is opened directly rather than framed, so it never sees
// the session cookie or the dashboard's storage; only the dashboard itself may frame it.
const SANDBOX_HEADERS: Record<string, string> = {
  "content-security-policy":
    "sandbox allow-scripts; default-src 'none'; script-src 'self' 'unsafe-eval'; connect-src 'none'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "SAMEORIGIN",
};
const SANDBOX_PATHS = new Set(["/repl-sandbox", "/repl-sandbox.html"]);

/** The dashboard's static asset for a GET or HEAD, or undefined when there is none at that path. */
export async function serveDashboard(request: Request, env: Env): Promise<Response | undefined> {
  if (env.ASSETS === undefined || (request.method !== "GET" && request.method !== "HEAD")) return undefined;
  const asset = await env.ASSETS.fetch(request);
  if (asset.status === 404) return undefined;
  const response = new Response(asset.body, asset);
  const headers = SANDBOX_PATHS.has(new URL(request.url).pathname) ? SANDBOX_HEADERS : SECURITY_HEADERS;
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}
