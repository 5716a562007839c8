import { ItxError } from "iterate/errors";
import { raceDeadline } from "./deadline.ts";

/**
 * A request body read whole, never past `maxBytes` (`tooLarge()` is thrown, by its declared
 * length or as it arrives) nor past `timeoutMs` (TIMEOUT): a client decides how much it sends and
 * how slowly, so a body read before anything authenticates bounds both, or one client trickling
 * bytes over many connections holds their memory for as long as it likes.
 */
export async function readRequestBody(request: Request, maxBytes: number, timeoutMs: number, tooLarge: () => ItxError): Promise<Uint8Array> {
  if (Number(request.headers.get("content-length") ?? "0") > maxBytes) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const started = Date.now();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    for (;;) {
      const step = await raceDeadline(reader.read(), timeoutMs - (Date.now() - started), (): never => {
        throw new ItxError("TIMEOUT", `a request body must arrive within ${timeoutMs} ms`, { details: { timeoutMs } });
      });
      if (step.done) break;
      bytes += step.value.byteLength;
      if (bytes > maxBytes) throw tooLarge();
      chunks.push(step.value);
    }
  } catch (error) {
    void reader.cancel().catch(() => undefined);
    throw error;
  }
  return new Uint8Array(await new Blob(chunks).arrayBuffer());
}
