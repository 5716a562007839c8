import { describe, expect, test } from "vitest";
import { ItxError } from "iterate/errors";
import { bufferedRequest, substituteHeaders } from "./egress-pipe.ts";
import { LIMITS } from "../limits.ts";

const MATERIAL = "sk-header-1234";

function refusal(headers: Headers, materials: Map<string, string>): ItxError {
  try {
    substituteHeaders(headers, materials);
  } catch (error) {
    if (error instanceof ItxError) return error;
    throw error;
  }
  throw new Error("the headers were substituted without a refusal");
}

describe("substituteHeaders", () => {
  test("fills every header value's placeholders and leaves other headers as they were", () => {
    const headers = new Headers({ authorization: 'Bearer getSecret("/secrets/a")', "x-both": 'getSecret("/secrets/a"):getSecret("/secrets/a")', "x-other": "kept" });
    substituteHeaders(headers, new Map([["/secrets/a", MATERIAL]]));
    expect(Object.fromEntries(headers)).toEqual({ authorization: `Bearer ${MATERIAL}`, "x-both": `${MATERIAL}:${MATERIAL}`, "x-other": "kept" });
  });

  test("material that is not printable ASCII (stored before updates refused it) is refused, naming the header and not the material", () => {
    for (const material of [`${MATERIAL}\r\nx-injected: 1`, `${MATERIAL}\u0000`, `${MATERIAL}-é€😀`]) {
      const headers = new Headers({ "x-key": 'getSecret("/secrets/a")' });
      const error = refusal(headers, new Map([["/secrets/a", material]]));
      expect(error.code).toBe("EGRESS_REFUSED");
      expect(error.details).toEqual({ reason: "header-value", header: "x-key" });
      expect(error.message).not.toContain(MATERIAL);
      // Nothing was set: the request still holds the placeholder.
      expect(headers.get("x-key")).toBe('getSecret("/secrets/a")');
    }
  });
});

// A body the sending code streams with no length: its size was looked at only once it was all
// in memory, however large (EGRESS_BODY_MAX_BYTES, EGRESS_BODY_READ_TIMEOUT_MS).
function streamed(chunks: number, chunkBytes: number, delayMs = 0): { request: Request; pulls: () => number; cancelled: () => boolean } {
  let pulls = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      pulls += 1;
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (pulls > chunks) controller.close();
      else controller.enqueue(new Uint8Array(chunkBytes).fill(0x61));
    },
    cancel() {
      cancelled = true;
    },
  });
  return { request: new Request("https://example.com/upload", { method: "POST", body }), pulls: () => pulls, cancelled: () => cancelled };
}

describe("bufferedRequest", () => {
  test("EGRESS_BODY_MAX_BYTES: a streamed body is refused once it passes the limit, with the rest never read", async () => {
    const limits = LIMITS as Record<string, number>;
    const saved = { ...limits };
    Object.assign(limits, { EGRESS_BODY_MAX_BYTES: 2_500 });
    try {
      const big = streamed(100, 1_000);
      const error = await bufferedRequest(big.request).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ItxError);
      expect(error).toMatchObject({ code: "INVALID_ARGUMENT", details: { limit: "EGRESS_BODY_MAX_BYTES" } });
      expect(big.pulls()).toBeLessThan(10);
      expect(big.cancelled()).toBe(true);
      // Within the limit, the body is kept byte for byte, for every road that asks.
      const small = streamed(2, 1_000);
      const copy = await bufferedRequest(small.request);
      expect((await copy().arrayBuffer()).byteLength).toBe(2_000);
      expect(new Uint8Array(await copy().arrayBuffer())).toEqual(new Uint8Array(2_000).fill(0x61));
      const declared = new Request("https://example.com/upload", { method: "POST", body: "x".repeat(10), headers: { "content-length": "999999" } });
      await expect(bufferedRequest(declared)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    } finally {
      Object.assign(limits, saved);
    }
  });

  test("EGRESS_BODY_READ_TIMEOUT_MS: a body trickled slower than the deadline is refused with TIMEOUT", async () => {
    const limits = LIMITS as Record<string, number>;
    const saved = { ...limits };
    Object.assign(limits, { EGRESS_BODY_READ_TIMEOUT_MS: 200 });
    try {
      const slow = streamed(1_000, 10, 50);
      await expect(bufferedRequest(slow.request)).rejects.toMatchObject({ code: "TIMEOUT" });
      expect(slow.pulls()).toBeLessThan(20);
    } finally {
      Object.assign(limits, saved);
    }
  });
});
