import { inject } from "vitest";
import { connectItx } from "iterate/client";
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

/** Awaits `promise` expecting a rejection; answers the error so the test can check its code. */
export async function rejection(promise: PromiseLike<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error("expected a rejection, but the call succeeded");
}
