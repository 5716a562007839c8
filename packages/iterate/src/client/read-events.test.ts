import { describe, expect, test } from "vitest";
import { ItxError } from "../errors/index.ts";
import { readEvents, type ReadableStream } from "./read-events.ts";

const AT = Date.UTC(2026, 11, 1);

/**
 * A stream of `head` events that answers packed pages in the formats it knows, at most `pageMax`
 * events each (as the OS's bound on a page's bytes cuts one short), and records what it was asked.
 */
function fakeStream(head: number, formats: ReadonlyArray<2 | 3>, pageMax = Number.POSITIVE_INFINITY) {
  const asked: Array<{ afterOffset: number; format: number | undefined }> = [];
  const stream: ReadableStream = {
    head: async () => head,
    getEventsPacked: async ({ afterOffset = 0, beforeOffset = Number.MAX_SAFE_INTEGER, limit = 1000, format }) => {
      asked.push({ afterOffset, format });
      if (!formats.includes(format as 2 | 3)) throw new ItxError("INVALID_ARGUMENT", `format is 1 or ${formats.join(" or ")}`);
      const offsets: number[] = [];
      for (let offset = afterOffset + 1; offset < beforeOffset && offset <= head && offsets.length < Math.min(limit, pageMax); offset++) offsets.push(offset);
      const base = { streamPath: "/s", from: afterOffset + 1, types: { "1": "demo/x" }, sources: { "1": { principal: "p" } } };
      return format === 3
        ? JSON.stringify({ format: 3, ...base, keys: {}, runs: offsets.length > 0 ? [afterOffset + 1, 1, 1, AT] : [], payloads: offsets.map((n) => ({ n })) })
        : JSON.stringify({ format: 2, ...base, rows: offsets.map((n) => [1, { n }, 1, null, AT]) });
    },
  };
  return { stream, asked };
}

async function readAll(stream: ReadableStream, pageSize: number): Promise<number[]> {
  const seen: number[] = [];
  for await (const page of readEvents(stream, { pageSize, prefetch: 2 })) {
    for (const event of page) {
      expect(event.payload).toEqual({ n: event.offset });
      seen.push(event.offset);
    }
  }
  return seen;
}

describe("readEvents", () => {
  test("reads every event once, in order, in packed format 3, pages requested ahead", async () => {
    const { stream, asked } = fakeStream(25, [2, 3]);
    expect(await readAll(stream, 10)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(asked).toEqual([0, 10, 20].map((afterOffset) => ({ afterOffset, format: 3 })));
  });

  test("an OS that refuses format 3 is read in format 2, from the first page, with nothing missed or repeated", async () => {
    const { stream, asked } = fakeStream(25, [2]);
    expect(await readAll(stream, 10)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(asked.filter((call) => call.format === 2).map((call) => call.afterOffset)).toEqual([0, 10, 20]);
  });

  test("a page the OS answers short is not the end: the rest of its range is read before the pages requested ahead", async () => {
    const { stream, asked } = fakeStream(25, [3], 4);
    expect(await readAll(stream, 10)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(asked.map((call) => call.afterOffset)).toEqual([0, 10, 20, 4, 8, 14, 18, 24]);
  });

  test("any other refusal is the reader's error", async () => {
    const stream: ReadableStream = { head: async () => 5, getEventsPacked: async () => Promise.reject(new ItxError("PERMISSION_DENIED", "not yours")) };
    await expect(readAll(stream, 10)).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
  });
});
