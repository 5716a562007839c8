/**
 * Whether a browser request comes from a page of this OS's own origin. Browsers send `Origin` on
 * every POST and on every WebSocket handshake and page script cannot forge it, so comparing it
 * with the request's own origin stops other sites from signing a visitor in or out (CSRF) and from
 * opening /api with the visitor's cookie (cross-site WebSocket hijacking). A request without
 * `Origin` is not a browser page's: it gets no cookie lane.
 */
export function isSameOrigin(request: Request): boolean {
  const origin = request.headers.get("origin");
  if (origin === null) return false;
  return origin === new URL(request.url).origin;
}
