/** The SHA-256 of `text` in hex, cut to `bytes` bytes (all 32 by default): names builds, isolates and mounts by content. */
export async function contentHash(text: string, bytes = 32): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest.subarray(0, bytes), (byte) => byte.toString(16).padStart(2, "0")).join("");
}
