import { HEADERS as H, type ProtocolAnswer, type ProtocolRequest } from "./protocol-api.ts";
import { base64, isTextMode } from "./message-mapping.ts";
import { formatOffset, parseOffset, type ReadFrom } from "./offsets.ts";
import { responseCursor } from "./request-parsing.ts";

/** Longest one SSE response stays open; the client reconnects from its last offset (as after any drop). */
export const SSE_MAX_MS = 60_000;

/** One SSE event. Every line of a payload gets its own data: prefix, so no payload can end an event or start one. */
function frame(event: string, data: string): string {
  return `event: ${event}\n${data.split(/\r\n|\r|\n/).map((line) => `data:${line}`).join("\n")}\n\n`;
}

/**
 * The SSE live mode: each page of events is one `data` event (a JSON array in JSON mode, text for
 * text streams, base64 otherwise) followed by a `control` event with the next offset, so every
 * data event can be parsed alone. Ends after the control event that reports the stream closed.
 * `onEnd` is called once, when the response has ended (or was never an event stream).
 */
export async function serveSse(
  ctx: ExecutionContext,
  request: Request,
  query: { from: ReadFrom; cursor?: string },
  read: (operation: ProtocolRequest) => Promise<ProtocolAnswer>,
  waitMs: number,
  onEnd: () => void = () => undefined,
): Promise<Response> {
  // The first step runs before answering, so a missing stream is a 404 and not an empty event stream.
  let head: ProtocolAnswer;
  try {
    head = await read({ op: "head" });
  } catch (error) {
    onEnd();
    throw error;
  }
  if (head.status !== 200) {
    onEnd();
    return new Response(typeof head.body === "string" ? head.body : null, { status: head.status, headers: { "content-type": "text/plain" } });
  }
  const contentType = head.headers["content-type"] ?? "application/json";
  const text = isTextMode(contentType);
  const tail = parseOffset(head.headers[H.nextOffset] ?? "");
  const startAfter = "now" in query.from ? (tail && "after" in tail ? tail.after : 0) : query.from.after;
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const encoder = new TextEncoder();

  const pump = async () => {
    const started = Date.now();
    let after = startAfter;
    // The first step answers at once (a reader learns where it stands); later ones wait for news.
    let wait = 0;
    try {
      while (!request.signal.aborted && Date.now() - started < SSE_MAX_MS) {
        const answer = await read({ op: "read", from: { after }, offsetParam: formatOffset(after), live: "sse", waitMs: wait });
        wait = waitMs;
        if (!answer.sse) break;
        const { last, upToDate, closed, count } = answer.sse;
        let out = "";
        if (count > 0) {
          const body = answer.body ?? "";
          out += frame("data", typeof body === "string" ? body : text ? new TextDecoder().decode(body) : base64(body));
        }
        const control: Record<string, unknown> = { streamNextOffset: formatOffset(last) };
        if (closed) control.streamClosed = true;
        else {
          control.streamCursor = responseCursor(query.cursor);
          if (upToDate) control.upToDate = true;
        }
        // One write per step: a data event and its control event reach the client together.
        await writer.write(encoder.encode(out + frame("control", JSON.stringify(control))));
        if (closed) break;
        after = last;
      }
    } catch {
      // The client went away (the write failed) or the stream did: end the response.
    }
    await writer.close().catch(() => undefined);
    onEnd();
  };
  ctx.waitUntil(pump());
  const headers: Record<string, string> = { "content-type": "text/event-stream", "cache-control": "no-cache" };
  if (!text) headers["Stream-SSE-Data-Encoding"] = "base64";
  return new Response(readable, { headers });
}
