// Browser-only: the page's way in and out. The OS answers sign-in with an httpOnly cookie that
// page script never sees; the /api WebSocket then authenticates with { type: "session-cookie" }.
import type { Credentials, Principal } from "iterate/types";

export interface SignInAnswer {
  principal: Principal;
  expiresAt: number;
}

/** Signs in with an admin secret or a bearer token; throws an Error carrying the OS's `code`. */
export async function signIn(credentials: Credentials): Promise<SignInAnswer> {
  return post<SignInAnswer>("/auth/sign-in", { credentials });
}

/** Ends the browser session (its open connections close too) and clears the cookie. */
export async function signOut(): Promise<void> {
  await post("/auth/sign-out", {});
}

async function post<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    credentials: "same-origin",
  });
  const answer = (await response.json()) as T & { code?: string; message?: string };
  if (!response.ok) throw Object.assign(new Error(answer.message ?? `${path} answered ${response.status}`), { code: answer.code });
  return answer;
}
