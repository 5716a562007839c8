import { describe, expect, test } from "vitest";
import { LIMITS } from "../limits.ts";
import { complete, type CompletionRequest } from "./llm-provider.ts";

const config = { provider: "openai-compatible", baseUrl: "https://model.test/v1", model: "m" } as const;
const encoder = new TextEncoder();
const CHUNK_BYTES = 16_384;
const SSE = { headers: { "content-type": "text/event-stream" } };

const data = (json: unknown) => `data: ${JSON.stringify(json)}\n\n`;
const delta = (content: string) => data({ choices: [{ delta: { content } }] });
/** `total` bytes of `fill` after `head`, in 16 KiB chunks. */
function chunked(head: string, fill: string, total: number): Uint8Array[] {
  const chunks = [encoder.encode(head)];
  for (let sent = 0; sent < total; sent += CHUNK_BYTES) chunks.push(encoder.encode(fill.repeat(CHUNK_BYTES)));
  return chunks;
}

// A model that answers `chunks` one per pull, then ends, or with `stall` sends nothing more and
// never ends. `seen` keeps how many bytes it sent and whether the OS cancelled the rest.
function model(chunks: Uint8Array[], init: ResponseInit, { stall = false, answerAfterMs = 0 }: { stall?: boolean; answerAfterMs?: number } = {}) {
  const seen = { sentBytes: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks.shift();
      if (chunk) {
        seen.sentBytes += chunk.byteLength;
        controller.enqueue(chunk);
      } else if (!stall) controller.close();
      else return new Promise<void>(() => undefined);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  const fetch = async () => {
    if (answerAfterMs > 0) await new Promise((resolve) => setTimeout(resolve, answerAfterMs));
    return new Response(body, init);
  };
  const deltas: string[] = [];
  const ask = (extra: Partial<CompletionRequest> = {}) =>
    complete({ config, messages: [{ role: "user", content: "hi" }], fetch, onDelta: (piece) => deltas.push(piece), ...extra });
  return { seen, deltas, ask };
}

describe("complete (openai-compatible)", () => {
  test("a reply streamed a byte at a time, split inside characters, is put back together", async () => {
    const stream = encoder.encode(`${delta("héllo 🌍")}: comment\n${delta(" wörld")}${data({ choices: [], usage: { total_tokens: 7 } })}data: [DONE]\n\n`);
    const { ask, deltas } = model([...stream].map((byte) => Uint8Array.of(byte)), SSE);
    expect(await ask()).toEqual({ text: "héllo 🌍 wörld", usage: { total_tokens: 7 } });
    expect(deltas).toEqual(["héllo 🌍", " wörld"]);
  });

  test("a line that never ends fails at LLM_STREAM_LINE_MAX_BYTES, and the rest of the stream is cancelled", async () => {
    const { ask, seen } = model(chunked('data: {"choices":[{"delta":{"content":"', "x", 4 * LIMITS.LLM_STREAM_LINE_MAX_BYTES), SSE);
    await expect(ask()).rejects.toMatchObject({ code: "LIMIT_EXCEEDED", details: { limit: "LLM_STREAM_LINE_MAX_BYTES" } });
    expect(seen.cancelled).toBe(true);
    expect(seen.sentBytes).toBeLessThan(LIMITS.LLM_STREAM_LINE_MAX_BYTES + 8 * CHUNK_BYTES);
  });

  test("a streamed line that is not JSON fails the request, and the rest of the stream is cancelled", async () => {
    const { ask, seen } = model([encoder.encode(`${delta("hi")}data: {not json\n\n`)], SSE, { stall: true });
    await expect(ask()).rejects.toMatchObject({ code: "UNAVAILABLE", message: expect.stringMatching(/not JSON/) });
    expect(seen.cancelled).toBe(true);
  });

  test("an error answer is read only as far as the start it quotes", async () => {
    const { ask, seen } = model(chunked("", "e", 8 * 1_048_576), { status: 502 });
    await expect(ask()).rejects.toMatchObject({ code: "UNAVAILABLE", details: { status: 502 }, message: expect.stringMatching(/HTTP 502: e{300}$/) });
    expect(seen.cancelled).toBe(true);
    expect(seen.sentBytes).toBeLessThan(8 * CHUNK_BYTES);
  });

  test("a JSON completion is read whole up to LLM_RESPONSE_MAX_BYTES; a larger one fails and the rest is cancelled", async () => {
    const json = { headers: { "content-type": "application/json" } };
    const small = model([encoder.encode(JSON.stringify({ choices: [{ message: { content: "ok" } }], usage: { total_tokens: 3 } }))], json);
    expect(await small.ask()).toEqual({ text: "ok", usage: { total_tokens: 3 } });
    const padded = chunked('{"choices":[{"message":{"content":"ok"}}],"padding":"', "x", 2 * LIMITS.LLM_RESPONSE_MAX_BYTES);
    const large = model([...padded, encoder.encode('"}')], json);
    await expect(large.ask()).rejects.toMatchObject({ code: "LIMIT_EXCEEDED", details: { limit: "LLM_RESPONSE_MAX_BYTES" } });
    expect(large.seen.cancelled).toBe(true);
    expect(large.seen.sentBytes).toBeLessThan(LIMITS.LLM_RESPONSE_MAX_BYTES + 8 * CHUNK_BYTES);
  });

  test("past its deadline a request fails with TIMEOUT and stops reading: a stalled stream is cancelled", async () => {
    const { ask, seen, deltas } = model([encoder.encode(delta("thinking"))], SSE, { stall: true });
    const asked = ask({ timeoutMs: 50 });
    asked.catch(() => undefined);
    await expect.poll(() => seen.cancelled, { timeout: 2_000 }).toBe(true);
    await expect(asked).rejects.toMatchObject({ code: "TIMEOUT" });
    expect(deltas).toEqual(["thinking"]);
  });

  test("an answer that arrives after the deadline is not read: its body is cancelled", async () => {
    const { ask, seen } = model([encoder.encode(delta("late"))], SSE, { stall: true, answerAfterMs: 100 });
    const asked = ask({ timeoutMs: 20 });
    asked.catch(() => undefined);
    await expect.poll(() => seen.cancelled, { timeout: 2_000 }).toBe(true);
    await expect(asked).rejects.toMatchObject({ code: "TIMEOUT" });
  });
});
