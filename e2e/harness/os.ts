import { inject } from "vitest";
import { connectItx } from "iterate/client";
import { errorCode } from "iterate/errors";
import type { Credentials } from "iterate/types";

/** The OS under test and how to reach it as admin. */
export function target(): { baseUrl: string; adminSecret: string; admin: Credentials } {
  const baseUrl = inject("baseUrl");
  const adminSecret = inject("adminSecret");
  return { baseUrl, adminSecret, admin: { type: "admin-secret", secret: adminSecret } };
}

/** A session authenticated with the admin secret. Dispose it (`using`). */
export function adminSession(transport?: "websocket" | "http-batch") {
  const { baseUrl, admin } = target();
  return connectItx({ baseUrl, auth: admin, transport });
}

/**
 * For `expect.poll`: whether a call now fails because its live capability's provider is gone
 * (CAPABILITY_DISCONNECTED). Any other outcome answers false, so the poll tries again.
 */
export async function disconnected(promise: PromiseLike<unknown>): Promise<boolean> {
  try {
    await promise;
    return false;
  } catch (error) {
    return errorCode(error) === "CAPABILITY_DISCONNECTED";
  }
}
