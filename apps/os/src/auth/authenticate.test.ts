import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { authenticate } from "./authenticate.ts";
import { LIMITS } from "../limits.ts";
import { expectCode } from "iterate/stream/test-support";

const secret = "workerd-test-secret";


describe("authenticate", () => {
  test("the admin secret answers the admin principal", async () => {
    expect((await authenticate(env as Env, { type: "admin-secret", secret })).principal).toEqual({ kind: "admin", id: "admin" });
  });

  test("impersonation de-duplicates its project ids", async () => {
    expect(
      (await authenticate(env as Env, { type: "impersonate", secret, principal: "bob", projectIds: ["p1", "p1", "p2"] })).principal,
    ).toEqual({ kind: "impersonated", id: "bob", projectIds: ["p1", "p2"] });
  });

  test("a deployment without an admin secret refuses the admin lanes", async () => {
    const bare = { ...(env as Env), ITERATE_ADMIN_SECRET: undefined };
    await expectCode(authenticate(bare, { type: "admin-secret", secret: "" + secret }), "UNAUTHENTICATED");
    await expectCode(authenticate({ ...bare, ITERATE_ADMIN_SECRET: "" }, { type: "admin-secret", secret: "x" }), "UNAUTHENTICATED");
  });

  test.each([
    ["wrong secret", { type: "admin-secret", secret: "wrong" }],
    ["prefix of the secret", { type: "admin-secret", secret: secret.slice(0, -1) }],
    ["CREDENTIAL_STRING_MAX_LENGTH", { type: "admin-secret", secret: "s".repeat(LIMITS.CREDENTIAL_STRING_MAX_LENGTH + 1) }],
    ["PRINCIPAL_ID_MAX_LENGTH", { type: "impersonate", secret, principal: "p".repeat(LIMITS.PRINCIPAL_ID_MAX_LENGTH + 1), projectIds: [] }],
    [
      "IMPERSONATED_PROJECT_IDS_MAX",
      { type: "impersonate", secret, principal: "p", projectIds: Array.from({ length: LIMITS.IMPERSONATED_PROJECT_IDS_MAX + 1 }, (_, i) => `p${i}`) },
    ],
    ["an unknown lane", { type: "cookie", secret }],
    ["a number", 7],
    ["undefined", undefined],
  ])("%s is UNAUTHENTICATED", async (_name, credentials) => {
    await expectCode(authenticate(env as Env, credentials), "UNAUTHENTICATED");
  });

  test("a secret at exactly CREDENTIAL_STRING_MAX_LENGTH is checked, not refused as malformed", async () => {
    await expect(
      authenticate(env as Env, { type: "admin-secret", secret: "s".repeat(LIMITS.CREDENTIAL_STRING_MAX_LENGTH) }),
    ).rejects.toThrow(/admin secret is wrong/);
  });
});
