/**
 * Whether a browser request comes from a page of this OS's own origin. Browsers stamp requests
 * with headers page script cannot set: `Origin` (every WebSocket handshake, cross-origin requests)
 * and `Sec-Fetch-Site` (every request of a current browser; Chromium sends no `Origin` on a
 * same-origin POST). An `Origin` must be this origin; without one, `Sec-Fetch-Site` must say
 * same-origin. This stops other sites from signing a visitor in or out (CSRF) and from opening
 * /api with the visitor's cookie (cross-site WebSocket hijacking). A request with neither is not
 * a browser page's: it gets no cookie lane.
 */
export function isSameOrigin(request: Request): boolean {
  const origin = request.headers.get("origin");
  if (origin !== null) return origin === new URL(request.url).origin;
  return request.headers.get("sec-fetch-site") === "same-origin";
}
