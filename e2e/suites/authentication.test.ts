import { describe, expect, test } from "vitest";
import { connectItx } from "iterate/client";
import { adminSession, target } from "../harness/os.ts";
import { expectCode } from "iterate/stream/test-support";

describe("authentication at /api", () => {
  test("the admin secret opens a session that describes its principal", async () => {
    using session = adminSession();
    const description = await session.__describe();
    expect(description.kind).toBe("session");
    expect(description.principal).toEqual({ kind: "admin", id: "admin" });
    expect(description.instructions).toMatch(/projects/);
    expect(Object.keys(description.children)).toContain("projects");
  });

  test("the same works over HTTP batch", async () => {
    using session = adminSession("http-batch");
    expect((await session.__describe()).principal).toEqual({ kind: "admin", id: "admin" });
  });

  test("impersonation acts as the named principal with exactly its projects", async () => {
    const { baseUrl, adminSecret } = target();
    using session = connectItx({
      baseUrl,
      auth: { type: "impersonate", secret: adminSecret, principal: "user-alice", projectIds: ["prj_a", "prj_b", "prj_a"] },
    });
    expect((await session.__describe()).principal).toEqual({
      kind: "impersonated",
      id: "user-alice",
      projectIds: ["prj_a", "prj_b"],
    });
  });

  test("impersonation needs the admin secret", async () => {
    const { baseUrl } = target();
    using session = connectItx({
      baseUrl,
      auth: { type: "impersonate", secret: "guess", principal: "user-alice", projectIds: [] },
    });
    await expectCode(session.__describe(), "UNAUTHENTICATED");
  });

  test("a wrong secret is UNAUTHENTICATED and says so", async () => {
    const { baseUrl } = target();
    using session = connectItx({ baseUrl, auth: { type: "admin-secret", secret: "not-the-secret" } });
    const error = await expectCode(session.__describe(), "UNAUTHENTICATED");
    expect(error.message).toMatch(/admin secret is wrong/);
    expect(error.message).not.toContain("not-the-secret");
  });

  test.each([
    ["a missing secret", { type: "admin-secret" }, /credentials\.secret/],
    ["an empty secret", { type: "admin-secret", secret: "" }, /must not be empty/],
    ["an unknown type", { type: "password", secret: "x" }, /credentials\.type must be one of/],
    ["a missing type", { secret: "x" }, /credentials\.type must be one of/],
    ["an unknown field", { type: "admin-secret", secret: "x", role: "root" }, /unknown field\(s\) role/],
    ["a secret of the wrong type", { type: "admin-secret", secret: 42 }, /credentials\.secret/],
    ["impersonation without projectIds", { type: "impersonate", secret: "x", principal: "p" }, /credentials\.projectIds/],
    ["a non-object (string)", "admin", /must be an object.*got string/],
    ["a non-object (null)", null, /must be an object.*got null/],
    ["a non-object (array)", [1, 2], /must be an object.*got an array/],
    ["an oversized secret (CREDENTIAL_STRING_MAX_LENGTH)", { type: "admin-secret", secret: "x".repeat(5000) }, /credentials\.secret/],
  ])("%s is refused with a clear coded error", async (_name, credentials, message) => {
    const { baseUrl } = target();
    using root = connectItx({ baseUrl });
    // oxlint-disable-next-line typescript/no-explicit-any -- deliberately malformed input
    const error = await expectCode((root as any).authenticate(credentials).__describe(), ["UNAUTHENTICATED", "INVALID_ARGUMENT"]);
    expect(error.message).toMatch(message);
  });

  test("bearer tokens this deployment never issued are refused", async () => {
    const { baseUrl } = target();
    using session = connectItx({ baseUrl, auth: { type: "bearer", token: "tok_made_up" } });
    await expectCode(session.__describe(), "UNAUTHENTICATED");
  });

  test("the unauthenticated root exposes nothing but authenticate", async () => {
    const { baseUrl } = target();
    using root = connectItx({ baseUrl });
    // oxlint-disable-next-line typescript/no-explicit-any -- probing names the root must not have
    const anyRoot = root as any;
    for (const name of ["__describe", "projects", "streams", "ping", "session", "whoami"]) {
      const error = (await anyRoot[name]().then(
        () => new Error("resolved"),
        (failure: unknown) => failure,
      )) as Error & { code?: string };
      expect(error.code, name).toBeUndefined();
      expect(error.message, name).toMatch(/not a function|does not exist|undefined/);
    }
    for (const name of ["projects", "streams"]) {
      await expect(anyRoot[name].list()).rejects.toThrow(/not a function|does not exist|undefined/);
    }
  });

  test("a project that does not exist answers NOT_FOUND", async () => {
    using session = adminSession();
    // oxlint-disable-next-line typescript/no-explicit-any -- the handle's methods are checked at call time
    await expectCode((session.projects.get("prj_nope") as any).whoami(), "NOT_FOUND");
  });
});
