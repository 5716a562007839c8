import { HEADERS as H, type ProtocolAnswer, type ProtocolRequest } from "./protocol-api.ts";
import { base64, isTextMode } from "./message-mapping.ts";
import { formatOffset, parseOffset, type ReadFrom } from "./offsets.ts";
import { responseCursor } from "./request-parsing.ts";
import { LIMITS } from "../limits.ts";
import { raceDeadline } from "../limits/deadline.ts";

/**
 * Writes `bytes` if the client takes them by `deadline` (epoch ms): false when it does not (it
 * stopped reading, and backpressure holds the write) or the write failed (it went away).
 */
async function writeBy(writer: WritableStreamDefaultWriter<Uint8Array>, bytes: Uint8Array, deadline: number): Promise<boolean> {
  const write = writer.write(bytes).then(
    () => true,
    () => false,
  );
  return raceDeadline(write, deadline - Date.now(), () => false);
}

/** Calls `callback` the first time only; what it throws is dropped (nothing may throw out of the pump). */
function once(callback: () => void): () => void {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    try {
      callback();
    } catch {
      // The response has ended either way.
    }
  };
}

/** One SSE event. Every line of a payload gets its own data: prefix, so no payload can end an event or start one. */
function frame(event: string, data: string): string {
  return `event: ${event}\n${data.split(/\r\n|\r|\n/).map((line) => `data:${line}`).join("\n")}\n\n`;
}

/**
 * The SSE live mode: each page of events is one `data` event (a JSON array in JSON mode, text for
 * text streams, base64 otherwise) followed by a `control` event with the next offset, so every
 * data event can be parsed alone. Ends after the control event that reports the stream closed,
 * or at STREAMS_HTTP_SSE_MAX_MS: a write the client has not taken by then cuts the response off.
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
  const end = once(onEnd);
  // The first step runs before answering, so a missing stream is a 404 and not an empty event stream.
  let head: ProtocolAnswer;
  try {
    head = await read({ op: "head" });
  } catch (error) {
    end();
    throw error;
  }
  if (head.status !== 200) {
    end();
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
    // Read at use time, so a test may lower it.
    const deadline = Date.now() + LIMITS.STREAMS_HTTP_SSE_MAX_MS;
    let after = startAfter;
    // The first step answers at once (a reader learns where it stands); later ones wait for news.
    let wait = 0;
    let cutOff = false;
    try {
      while (!request.signal.aborted && Date.now() < deadline) {
        // A wait for news never runs past the deadline.
        const answer = await read({ op: "read", from: { after }, offsetParam: formatOffset(after), live: "sse", waitMs: Math.max(0, Math.min(wait, deadline - Date.now())) });
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
        // One write per step: a data event and its control event reach the client together. A
        // client that does not take it by the deadline (or is gone) is cut off.
        if (!(await writeBy(writer, encoder.encode(out + frame("control", JSON.stringify(control))), deadline))) {
          cutOff = true;
          break;
        }
        if (closed) break;
        after = last;
      }
    } catch {
      // A read of the stream failed (or a page could not be framed): end the response.
    }
    // close() would wait behind a write the client never took; abort() drops it and errors the body.
    // A close has no write to wait for, and is bounded all the same: the slot goes back by the deadline.
    if (cutOff) void writer.abort(new Error("the SSE client did not read in time (STREAMS_HTTP_SSE_MAX_MS)")).catch(() => undefined);
    else await raceDeadline(writer.close().catch(() => undefined), deadline - Date.now(), () => undefined);
    end();
  };
  ctx.waitUntil(pump());
  const headers: Record<string, string> = { "content-type": "text/event-stream", "cache-control": "no-cache" };
  if (!text) headers["Stream-SSE-Data-Encoding"] = "base64";
  return new Response(readable, { headers });
}
