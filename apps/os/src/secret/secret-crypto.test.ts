import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { errorCode } from "iterate/errors";
import { decryptMaterial, encryptMaterial, secretsRootKey } from "./secret-crypto.ts";

describe("the secrets root key fails closed", () => {
  test("a deployment without ITERATE_SECRETS_KEY has no default key: UNAVAILABLE naming the variable", () => {
    for (const value of [undefined, ""]) {
      let caught: unknown;
      try {
        secretsRootKey({ ITERATE_SECRETS_KEY: value });
      } catch (error) {
        caught = error;
      }
      expect(errorCode(caught)).toBe("UNAVAILABLE");
      expect((caught as { details?: unknown }).details).toEqual({ missing: "ITERATE_SECRETS_KEY" });
      expect(String((caught as Error).message)).toContain("ITERATE_SECRETS_KEY");
    }
    expect(secretsRootKey({ ITERATE_SECRETS_KEY: "k" })).toBe("k");
  });

  test("the secret Durable Object of such a deployment refuses to store material", async () => {
    // The workerd test deployment sets no ITERATE_SECRETS_KEY, as a forgetful deployment would.
    expect(env.ITERATE_SECRETS_KEY).toBeUndefined();
    const stub = env.SECRET.getByName(`p-${crypto.randomUUID()}:/secrets/token`);
    // The refusal is answered as a value (an expected outcome is not an uncaught exception).
    const answer = await stub.update({ material: "sk-x", egress: { urls: ["https://api.example.com/"] } }, { principal: "admin", origin: "/" });
    expect(answer).toMatchObject({ ok: false, error: { code: "UNAVAILABLE", details: { missing: "ITERATE_SECRETS_KEY" } } });
    expect((await stub.describe()).set).toBe(false);
  });

  test("material encrypted under one key and coordinate decrypts only under the same pair", async () => {
    const sealed = await encryptMaterial("key-a", "p:/secrets/a", "sk-1");
    expect(await decryptMaterial("key-a", "p:/secrets/a", sealed.iv, sealed.ciphertext)).toBe("sk-1");
    await expect(decryptMaterial("key-b", "p:/secrets/a", sealed.iv, sealed.ciphertext)).rejects.toThrow(/./);
    await expect(decryptMaterial("key-a", "p:/secrets/b", sealed.iv, sealed.ciphertext)).rejects.toThrow(/./);
  });
});
