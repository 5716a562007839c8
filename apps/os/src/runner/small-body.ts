// Imports only import-free modules: the runner (runner-worker.ts) loads it without a bundler.
import { concat } from "../bytes.ts";

/**
 * `body` read whole when it holds at most `max` bytes; otherwise a stream of all of it (the bytes
 * read so far, then the rest as it comes), so that a caller whose length header said "small" can
 * still send it on the streaming road. Reading stops one chunk past `max`: a length header is the
 * sender's word, and loaded code may declare ten bytes and stream a gigabyte.
 */
export async function smallBody(body: ReadableStream<Uint8Array>, max: number): Promise<ArrayBuffer | ReadableStream<Uint8Array>> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
    if (total > max) return rest(chunks, reader);
  }
  return concat(chunks).buffer as ArrayBuffer;
}

function rest(read: Uint8Array[], reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of read) controller.enqueue(chunk);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
