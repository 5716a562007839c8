import { cookieName } from "../auth/session-cookie.ts";

const SESSION_COOKIES = new Set([cookieName(new URL("https://os.invalid/")), cookieName(new URL("http://os.invalid/"))]);

/**
 * `request` as the project's own code may see it: without the OS's browser-session cookie. Ingress
 * hosts are the project's, and the cookie is host-only, so a browser sends it there only when a
 * deployment put the OS's own host under the ingress base (`os.example.com` with base
 * `example.com` and a project `os`). Even then the project's worker never holds the OS's credential.
 */
export function withoutOsCredentials(request: Request): Request {
  const cookie = request.headers.get("cookie");
  if (cookie === null) return request;
  const kept = cookie
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part !== "" && !SESSION_COOKIES.has(part.split("=")[0]?.trim() ?? ""));
  const headers = new Headers(request.headers);
  if (kept.length === 0) headers.delete("cookie");
  else headers.set("cookie", kept.join("; "));
  return new Request(request, { headers });
}
