import { describe, expect } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import type { Credentials } from "iterate/types";
import { mounted, test } from "../harness/fixtures.ts";

describe("authentication at /api", () => {
  test("the admin secret opens a session that describes its principal", async ({ admin: session }) => {
    const description = await session.__describe();
    expect(description.kind).toBe("session");
    expect(description.principal).toEqual({ kind: "admin", id: "admin" });
    expect(description.instructions).toMatch(/projects/);
    expect(Object.keys(description.children)).toContain("projects");
  });

  test("the same works over HTTP batch", async ({ os, connect }) => {
    const session = connect({ auth: os.admin, transport: "http-batch" });
    expect((await session.__describe()).principal).toEqual({ kind: "admin", id: "admin" });
  });

  test("impersonation acts as the named principal with exactly its projects", async ({ os, connect }) => {
    const session = connect({
      auth: { type: "impersonate", secret: os.adminSecret, principal: "user-alice", projectIds: ["prj_a", "prj_b", "prj_a"] },
    });
    expect((await session.__describe()).principal).toEqual({
      kind: "impersonated",
      id: "user-alice",
      projectIds: ["prj_a", "prj_b"],
    });
  });

  test("impersonation needs the admin secret", async ({ connect }) => {
    const session = connect({
      auth: { type: "impersonate", secret: "guess", principal: "user-alice", projectIds: [] },
    });
    await expectCode(session.__describe(), "UNAUTHENTICATED");
  });

  test("a wrong secret is UNAUTHENTICATED and says so", async ({ connect }) => {
    const session = connect({ auth: { type: "admin-secret", secret: "not-the-secret" } });
    const error = await expectCode(session.__describe(), "UNAUTHENTICATED");
    expect(error.message).toMatch(/admin secret is wrong/);
    expect(error.message).not.toContain("not-the-secret");
  });

  test.for([
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
  ] as const)("%s is refused with a clear coded error", async ([_name, credentials, message], { connect }) => {
    const root = connect();
    // Deliberately malformed credentials: the contract's type would refuse them at compile time.
    const error = await expectCode(root.authenticate(credentials as unknown as Credentials).__describe(), ["UNAUTHENTICATED", "INVALID_ARGUMENT"]);
    expect(error.message).toMatch(message);
  });

  test("bearer tokens this deployment never issued are refused", async ({ connect }) => {
    const session = connect({ auth: { type: "bearer", token: "tok_made_up" } });
    await expectCode(session.__describe(), "UNAUTHENTICATED");
  });

  test("the unauthenticated root exposes nothing but authenticate", async ({ connect }) => {
    // Probing names the root must not have: its type would refuse them at compile time.
    const root = connect();
    const names = ["__describe", "projects", "streams", "ping", "session", "whoami"] as const;
    const called = mounted<Record<(typeof names)[number], () => unknown>>(root);
    for (const name of names) {
      const error = (await called[name]().then(
        () => new Error("resolved"),
        (failure: unknown) => failure,
      )) as Error & { code?: string };
      expect(error.code, name).toBeUndefined();
      expect(error.message, name).toMatch(/not a function|does not exist|undefined/);
    }
    const listed = mounted<Record<"projects" | "streams", { list(): unknown }>>(root);
    for (const name of ["projects", "streams"] as const) {
      await expect(listed[name].list()).rejects.toThrow(/not a function|does not exist|undefined/);
    }
  });

  test("a project that does not exist answers NOT_FOUND", async ({ admin: session }) => {
    await expectCode(session.projects.get("prj_nope").whoami(), "NOT_FOUND");
  });
});
