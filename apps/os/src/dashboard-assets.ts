
// What every dashboard response carries. The CSP keeps the page to its own scripts and its own
// origin's /api (no CDN, nothing injected, no eval: the REPL sends its source to run on the OS as
// itx.run and never evaluates it in the page, decision 0020).
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

/** The dashboard's static asset for a GET or HEAD, or undefined when there is none at that path. */
export async function serveDashboard(request: Request, env: Env): Promise<Response | undefined> {
  if (env.ASSETS === undefined || (request.method !== "GET" && request.method !== "HEAD")) return undefined;
  const asset = await env.ASSETS.fetch(request);
  if (asset.status === 404) return undefined;
  const response = new Response(asset.body, asset);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.headers.set(name, value);
  return response;
}
