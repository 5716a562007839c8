import { describe, expect, test } from "vitest";
import { smallBody } from "./small-body.ts";

/** A body of `chunks` chunks of `size` bytes (byte i of chunk k is k), counting what was pulled. */
function body(chunks: number, size: number): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= chunks) return controller.close();
      controller.enqueue(new Uint8Array(size).fill(pulled));
      pulled += 1;
    },
  });
  return { stream, pulled: () => pulled };
}

describe("smallBody: the runner's inline road reads no more than it may", () => {
  test("a body within the bound is answered whole, byte for byte", async () => {
    const read = await smallBody(body(3, 100).stream, 300);
    expect(read).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(read as ArrayBuffer)]).toEqual(Array.from({ length: 300 }, (_, i) => Math.floor(i / 100)));
  });

  test("a body longer than the bound (whatever its length header said) stops being read one chunk past it, and streams on whole", async () => {
    const source = body(1_000, 1_000);
    const read = await smallBody(source.stream, 2_500);
    expect(read).toBeInstanceOf(ReadableStream);
    expect(source.pulled()).toBeLessThan(10);
    // Nothing is lost: the bytes read first come out first, then the rest.
    const all = new Uint8Array(await new Response(read as ReadableStream<Uint8Array>).arrayBuffer());
    expect(all.byteLength).toBe(1_000_000);
    expect([all[0], all[999], all[1_000], all[2_999], all[3_000], all[999_999]]).toEqual([0, 0, 1, 2, 3, 231]);
  });
});
