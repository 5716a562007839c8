// AES-GCM encryption of secret material. The key is derived (HKDF-SHA-256) from the deployment's
// ITERATE_SECRETS_KEY, salted with the secret's coordinate, so ciphertext copied between secrets
// does not decrypt.
import { ItxError } from "iterate/errors";

const encoder = new TextEncoder();

/**
 * The deployment's root key, or UNAVAILABLE when it has none. There is no built-in default: a
 * deployment that forgot the key refuses to store or use secrets rather than encrypting them under
 * a key anyone can read in this repository. Only the local runner (scripts/local-os.ts) supplies a
 * local key, and says so when it starts.
 */
export function secretsRootKey(env: { ITERATE_SECRETS_KEY?: string | undefined }): string {
  const key = env.ITERATE_SECRETS_KEY;
  if (typeof key !== "string" || key === "") {
    throw new ItxError("UNAVAILABLE", "secrets are unavailable: this deployment has no ITERATE_SECRETS_KEY (wrangler secret put ITERATE_SECRETS_KEY)", {
      details: { missing: "ITERATE_SECRETS_KEY" },
    });
  }
  return key;
}

export async function encryptMaterial(rootKey: string, coordinate: string, material: string): Promise<{ iv: Uint8Array; ciphertext: Uint8Array }> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const key = await deriveKey(rootKey, coordinate);
  const ciphertext = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, encoder.encode(material)));
  return { iv, ciphertext };
}

export async function decryptMaterial(rootKey: string, coordinate: string, iv: Uint8Array, ciphertext: Uint8Array): Promise<string> {
  const key = await deriveKey(rootKey, coordinate);
  return new TextDecoder().decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv }, key, ciphertext));
}

async function deriveKey(rootKey: string, coordinate: string): Promise<CryptoKey> {
  const base = await crypto.subtle.importKey("raw", encoder.encode(rootKey), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: encoder.encode(coordinate), info: encoder.encode("iterate secret material v1") },
    base,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}
