import { describe, expect, test } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import { LIMITS } from "../limits.ts";
import { pushBytesInFlight, readGitBody, readPushBody } from "./git-request-body.ts";

const CHUNK = 1_048_576;

/** A chunked body of `total` bytes (the first `head` given), counting what was pulled from it. */
function streamed(total: number, head: Uint8Array = new Uint8Array(0)) {
  const pulled = { bytes: 0 };
  const filler = new Uint8Array(CHUNK).fill(7);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.bytes >= total) return controller.close();
      const first = pulled.bytes === 0 && head.byteLength > 0;
      const chunk = first ? head : filler.subarray(0, Math.min(CHUNK, total - pulled.bytes));
      pulled.bytes += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  const request = new Request("http://os.test/git", { method: "POST", body, headers: { "content-type": "application/x-git-receive-pack-request" } });
  return { request, pulled };
}

const COMMANDS = new TextEncoder().encode(`0074${"0".repeat(40)} ${"a".repeat(40)} refs/heads/main\0report-status\n0000PACK`);

describe("readPushBody", () => {
  test("a body within GIT_HTTP_BODY_MAX_BYTES is read whole", async () => {
    const { request } = streamed(LIMITS.GIT_HTTP_BODY_MAX_BYTES, COMMANDS);
    const body = await readPushBody(request);
    body.release();
    expect(body.refused).toBeUndefined();
    expect(body.bytes.byteLength).toBe(LIMITS.GIT_HTTP_BODY_MAX_BYTES);
  });

  test("past GIT_HTTP_BODY_MAX_BYTES the rest is read and dropped: the head (its commands) and the refusal remain", async () => {
    const { request, pulled } = streamed(LIMITS.GIT_HTTP_BODY_MAX_BYTES + 5 * CHUNK, COMMANDS);
    const body = await readPushBody(request);
    body.release();
    expect(pulled.bytes).toBe(LIMITS.GIT_HTTP_BODY_MAX_BYTES + 5 * CHUNK);
    expect(body.refused?.code).toBe("INVALID_ARGUMENT");
    expect(body.refused?.details).toEqual({ limit: "GIT_HTTP_BODY_MAX_BYTES" });
    expect(body.bytes.byteLength).toBe(262_144);
    expect(body.bytes.subarray(0, COMMANDS.byteLength)).toEqual(COMMANDS);
  });

  test("GIT_HTTP_REFUSED_BODY_DRAIN_MAX_BYTES: past it reading stops and the push is refused at once", async () => {
    const { request, pulled } = streamed(LIMITS.GIT_HTTP_REFUSED_BODY_DRAIN_MAX_BYTES + 64 * CHUNK, COMMANDS);
    const refused = await expectCode(readPushBody(request), "INVALID_ARGUMENT");
    expect((refused as { details?: unknown }).details).toEqual({ limit: "GIT_HTTP_BODY_MAX_BYTES" });
    // The stream is pulled at most a chunk or two ahead of what was read.
    expect(pulled.bytes).toBeLessThanOrEqual(LIMITS.GIT_HTTP_REFUSED_BODY_DRAIN_MAX_BYTES + 3 * CHUNK);
  });

  test("a gzip body past the limit is refused at once, not drained: what it inflates to is not what was sent", async () => {
    // Drained, the same body would answer its head and the refusal (the test above) instead of throwing.
    const { request: plain } = streamed(LIMITS.GIT_HTTP_BODY_MAX_BYTES + 8 * CHUNK, COMMANDS);
    const gzip = plain.body?.pipeThrough(new CompressionStream("gzip"));
    const request = new Request("http://os.test/git", { method: "POST", body: gzip ?? null, headers: { "content-encoding": "gzip" } });
    const refused = await expectCode(readPushBody(request), "INVALID_ARGUMENT");
    expect((refused as { details?: unknown }).details).toEqual({ limit: "GIT_HTTP_BODY_MAX_BYTES" });
  });

  test("a declared length past the limit is drained like a streamed one; past the drain bound it is refused before anything is read", async () => {
    const { request: streamedOne, pulled } = streamed(LIMITS.GIT_HTTP_BODY_MAX_BYTES + CHUNK, COMMANDS);
    const declared = new Request("http://os.test/git", { method: "POST", body: streamedOne.body, headers: { "content-length": String(LIMITS.GIT_HTTP_BODY_MAX_BYTES + CHUNK) } });
    const drained = await readPushBody(declared);
    drained.release();
    expect(drained.refused?.details).toEqual({ limit: "GIT_HTTP_BODY_MAX_BYTES" });
    expect(pulled.bytes).toBe(LIMITS.GIT_HTTP_BODY_MAX_BYTES + CHUNK);
    const huge = new Request("http://os.test/git", { method: "POST", body: "x", headers: { "content-length": String(LIMITS.GIT_HTTP_REFUSED_BODY_DRAIN_MAX_BYTES + 1) } });
    await expectCode(readPushBody(huge), "INVALID_ARGUMENT");
  });
});

describe("GIT_HTTP_PUSH_BYTES_IN_FLIGHT_MAX", () => {
  test("push bodies held at once in the isolate are bounded: past it a push is UNAVAILABLE and holds nothing; released, the room comes back", async () => {
    expect(pushBytesInFlight()).toBe(0);
    const { request: first } = streamed(LIMITS.GIT_HTTP_BODY_MAX_BYTES, COMMANDS);
    const held = await readPushBody(first);
    expect(pushBytesInFlight()).toBe(LIMITS.GIT_HTTP_BODY_MAX_BYTES);
    const room = LIMITS.GIT_HTTP_PUSH_BYTES_IN_FLIGHT_MAX - LIMITS.GIT_HTTP_BODY_MAX_BYTES;
    const { request: small } = streamed(room - 1_000, COMMANDS);
    const fits = await readPushBody(small);
    // Past the room a push is read to its end and refused (UNAVAILABLE), holding only its head.
    const { request: second, pulled } = streamed(10 * CHUNK, COMMANDS);
    const busy = await readPushBody(second);
    expect(pulled.bytes).toBe(10 * CHUNK);
    expect(busy.refused?.code).toBe("UNAVAILABLE");
    expect(busy.refused?.details).toEqual({ limit: "GIT_HTTP_PUSH_BYTES_IN_FLIGHT_MAX" });
    expect(busy.bytes.subarray(0, COMMANDS.byteLength)).toEqual(COMMANDS);
    expect(pushBytesInFlight()).toBeLessThanOrEqual(LIMITS.GIT_HTTP_BODY_MAX_BYTES + room - 1_000 + busy.bytes.byteLength);
    busy.release();
    expect(pushBytesInFlight()).toBe(LIMITS.GIT_HTTP_BODY_MAX_BYTES + room - 1_000);
    held.release();
    fits.release();
    expect(pushBytesInFlight()).toBe(0);
    const { request: again } = streamed(10 * CHUNK, COMMANDS);
    (await readPushBody(again)).release();
    // A refused (oversized) push holds only its head while it drains, and nothing once it fails.
    const { request: oversized } = streamed(LIMITS.GIT_HTTP_BODY_MAX_BYTES + CHUNK, COMMANDS);
    const refused = await readPushBody(oversized);
    expect(pushBytesInFlight()).toBe(refused.bytes.byteLength);
    refused.release();
    expect(pushBytesInFlight()).toBe(0);
  });
});

/** A body that says it is gzip and is not. */
const garbage = () => new Request("http://os.test/git", { method: "POST", body: "not gzip at all", headers: { "content-encoding": "gzip" } });

describe("GIT_HTTP_PUSH_LEASE_MAX_MS", () => {
  test("bytes of a push never given back (its client went away) stop counting once the lease is past its age", async () => {
    const saved = LIMITS.GIT_HTTP_PUSH_LEASE_MAX_MS;
    try {
      const { request: lost } = streamed(LIMITS.GIT_HTTP_BODY_MAX_BYTES, COMMANDS);
      await readPushBody(lost); // never released
      const { request: next } = streamed(20 * CHUNK, COMMANDS);
      const busy = await readPushBody(next);
      busy.release();
      expect(busy.refused?.code).toBe("UNAVAILABLE");
      (LIMITS as Record<string, number>).GIT_HTTP_PUSH_LEASE_MAX_MS = -1;
      const { request: after } = streamed(20 * CHUNK, COMMANDS);
      const body = await readPushBody(after);
      expect(pushBytesInFlight()).toBe(20 * CHUNK);
      body.release();
      expect(pushBytesInFlight()).toBe(0);
    } finally {
      (LIMITS as Record<string, number>).GIT_HTTP_PUSH_LEASE_MAX_MS = saved;
    }
  });
});

describe("a body that cannot be read", () => {
  test("bad gzip, or a body that breaks off, is INVALID_ARGUMENT (not an uncoded 500)", async () => {
    await expectCode(readPushBody(garbage()), "INVALID_ARGUMENT");
    await expectCode(readGitBody(garbage(), LIMITS.GIT_HTTP_NEGOTIATION_MAX_BYTES, "GIT_HTTP_NEGOTIATION_MAX_BYTES"), "INVALID_ARGUMENT");
    const broken = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error("connection reset"));
      },
    });
    await expectCode(readPushBody(new Request("http://os.test/git", { method: "POST", body: broken })), "INVALID_ARGUMENT");
  });
});

describe("readGitBody", () => {
  test("GIT_HTTP_NEGOTIATION_MAX_BYTES: a larger negotiation is refused naming the limit, and not read on", async () => {
    const { request, pulled } = streamed(10 * LIMITS.GIT_HTTP_NEGOTIATION_MAX_BYTES);
    const refused = await expectCode(readGitBody(request, LIMITS.GIT_HTTP_NEGOTIATION_MAX_BYTES, "GIT_HTTP_NEGOTIATION_MAX_BYTES"), "INVALID_ARGUMENT");
    expect((refused as { details?: unknown }).details).toEqual({ limit: "GIT_HTTP_NEGOTIATION_MAX_BYTES" });
    expect(pulled.bytes).toBeLessThanOrEqual(LIMITS.GIT_HTTP_NEGOTIATION_MAX_BYTES + 3 * CHUNK);
    const { request: small } = streamed(1_000);
    expect((await readGitBody(small, LIMITS.GIT_HTTP_NEGOTIATION_MAX_BYTES, "GIT_HTTP_NEGOTIATION_MAX_BYTES")).byteLength).toBe(1_000);
  });
});
