import { ItxError } from "iterate/errors";
import { limitDetails, type LimitName } from "../limits.ts";
import { concat } from "../bytes.ts";

/**
 * The bytes of a response body, read to the end but never past `maxBytes` (LIMIT_EXCEEDED, the
 * rest cancelled) nor past `deadline` (TIMEOUT): a remote server decides how much it sends and
 * how slowly, so a client that reads whole answers bounds both.
 */
export async function readBounded(
  response: Pick<Response, "body" | "headers">,
  maxBytes: number,
  limit: LimitName,
  timeoutMs: number,
  // A refused response is cancelled, so its sender stops; a refused request body is left alone
  // (the runtime discards it with the request, and cancelling it can cut the answer off too).
  { cancel = true }: { cancel?: boolean } = {},
): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array();
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    if (cancel) void response.body.cancel();
    throw tooLarge(maxBytes, limit);
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ItxError("TIMEOUT", `a remote answer took longer than ${timeoutMs} ms to arrive`)), timeoutMs);
  });
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), deadline]);
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw tooLarge(maxBytes, limit);
      chunks.push(value);
    }
  } catch (error) {
    if (cancel) void reader.cancel().catch(() => undefined);
    else reader.releaseLock();
    throw error;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
  return concat(chunks);
}

/** The same response with its body read whole under the bounds of `readBounded`. */
export async function bufferedResponse(response: Response, maxBytes: number, limit: LimitName, timeoutMs: number): Promise<Response> {
  const bytes = await readBounded(response, maxBytes, limit, timeoutMs);
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  headers.delete("content-encoding");
  const empty = response.status === 204 || response.status === 304 || bytes.byteLength === 0;
  return new Response(empty ? null : bytes, { status: response.status, statusText: response.statusText, headers });
}

function tooLarge(maxBytes: number, limit: LimitName): ItxError {
  return new ItxError("LIMIT_EXCEEDED", `a remote answer is larger than ${maxBytes} bytes`, { details: limitDetails(limit) });
}
