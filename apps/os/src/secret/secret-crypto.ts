// AES-GCM encryption of secret material. The key is derived (HKDF-SHA-256) from the deployment's
// ITERATE_SECRETS_KEY, salted with the secret's coordinate, so ciphertext copied between secrets
// does not decrypt.

/** Used when ITERATE_SECRETS_KEY is unset: fine on a laptop, never for a deployment. */
export const LOCAL_SECRETS_KEY = "iterate-local-secrets-key";

const encoder = new TextEncoder();

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
