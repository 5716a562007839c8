import { exports } from "cloudflare:workers";
import { newHttpBatchRpcSession } from "capnweb";
import { describe, expect, test } from "vitest";
import type { UnauthenticatedRoot } from "iterate/types";

describe("/api over HTTP batch inside workerd", () => {
  test("authenticate and describe in one batch", async () => {
    const root = newHttpBatchRpcSession<UnauthenticatedRoot>(
      new Request("http://os.test/api", { fetcher: exports.default } as RequestInit),
    );
    // Pipelined: authenticate and __describe travel in the same batch.
    const description = await root.authenticate({ type: "admin-secret", secret: "workerd-test-secret" }).__describe();
    expect(description.principal).toEqual({ kind: "admin", id: "admin" });
  });

  test("GET /api explains how to use it", async () => {
    const response = await exports.default.fetch("http://os.test/api");
    expect(response.status).toBe(405);
    expect(await response.text()).toMatch(/Cap'n Web/);
  });

  test("the bench root is not reachable unless enabled", async () => {
    const response = await exports.default.fetch("http://os.test/api/bench", { method: "POST", body: "[]" });
    expect(response.status).toBe(404);
  });

  test("unknown routes answer a coded 404", async () => {
    const response = await exports.default.fetch("http://os.test/nope");
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: "NOT_FOUND", message: "no such route" });
  });
});
