import { createServer } from "node:net";
import { afterEach, describe, expect, test, vi } from "vitest";
import { errorCode } from "../errors/index.ts";
import { connectItx } from "./connect-itx.ts";

/** A loopback port nothing listens on (asked of the kernel, then released). */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  await new Promise((closed) => server.close(closed));
  return port;
}

afterEach(() => vi.unstubAllGlobals());

describe("connectItx", () => {
  test("a URL where no OS answers fails every call with UNAVAILABLE naming that URL", async () => {
    const baseUrl = `http://127.0.0.1:${await deadPort()}`;
    // oxlint-disable-next-line typescript/no-explicit-any -- a stub's surface is dynamic
    using session: any = connectItx({ baseUrl, auth: { type: "admin-secret", secret: "x" } });
    const failure = await session.__describe().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(errorCode(failure)).toBe("UNAVAILABLE");
    expect((failure as Error).message).toContain(`no iterate OS answers at ${baseUrl}`);
    expect((failure as { details?: unknown }).details).toMatchObject({ reason: "unreachable", url: baseUrl });
  });

  test("awaiting an unreachable handle rejects with the same coded error", async () => {
    const baseUrl = `http://127.0.0.1:${await deadPort()}/`;
    await expect(connectItx({ baseUrl, auth: { type: "admin-secret", secret: "x" } })).rejects.toMatchObject({ code: "UNAVAILABLE" });
  });

  test("without a global WebSocket (Node before 22) it says which Node it needs", () => {
    vi.stubGlobal("WebSocket", undefined);
    expect(() => connectItx({ baseUrl: "http://127.0.0.1:1" })).toThrow(/iterate needs Node 22 or later \(this is Node /);
  });

  test("agentPath must be an agent's path inside a project", () => {
    const auth = { type: "admin-secret", secret: "x" } as const;
    expect(() => connectItx({ baseUrl: "http://127.0.0.1:1", auth, projectId: "p", agentPath: "/itx/a" })).toThrow(/agentPath is an agent's context path/);
  });

  test("a base URL that is not an absolute http(s) URL is INVALID_ARGUMENT", () => {
    expect(() => connectItx({ baseUrl: "127.0.0.1:8787" })).toThrow(/baseUrl must/);
  });
});
