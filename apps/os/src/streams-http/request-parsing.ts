import { raceDeadline } from "../limits/deadline.ts";
import { LIMITS } from "../limits.ts";
import { HEADERS as H } from "./protocol-api.ts";
import { parseOffset, type ReadFrom } from "./offsets.ts";
import type { ProducerTuple } from "./protocol-state.ts";

/** A request the route refuses before it reaches a stream: the protocol's status and a short reason. */
export class Refusal {
  readonly status: number;
  readonly message: string;

  constructor(status: number, message: string) {
    this.status = status;
    this.message = message;
  }
}

const INTEGER = /^(0|[1-9]\d*)$/;
const DIGITS = /^\d+$/;

/** A header's value, or undefined; longer than STREAMS_HTTP_HEADER_MAX_LENGTH is refused. */
export function header(request: Request, name: string): string | undefined {
  const value = request.headers.get(name);
  if (value === null) return undefined;
  if (value.length > LIMITS.STREAMS_HTTP_HEADER_MAX_LENGTH) {
    throw new Refusal(400, `${name} is longer than ${LIMITS.STREAMS_HTTP_HEADER_MAX_LENGTH} characters (STREAMS_HTTP_HEADER_MAX_LENGTH)`);
  }
  return value;
}

/** A PUT's Content-Type: a type/subtype value, or undefined (absent, empty or malformed: the default applies). */
export function createContentType(request: Request): string | undefined {
  const value = header(request, "content-type")?.trim();
  return value && /^[\w.+-]+\/[\w.+-]+/.test(value) ? value : undefined;
}

/** Stream-TTL and Stream-Expires-At of a PUT (at most one of them). */
export function expiry(request: Request): { ttlSeconds?: number; expiresAt?: string } {
  const ttl = header(request, H.ttl);
  const expiresAt = header(request, H.expiresAt);
  if (ttl !== undefined && expiresAt !== undefined) throw new Refusal(400, "Cannot specify both Stream-TTL and Stream-Expires-At");
  if (ttl !== undefined) {
    const seconds = INTEGER.test(ttl) ? Number(ttl) : NaN;
    if (!Number.isSafeInteger(seconds) || seconds > LIMITS.STREAMS_HTTP_TTL_MAX_SECONDS) throw new Refusal(400, "Invalid Stream-TTL value");
    return { ttlSeconds: seconds };
  }
  if (expiresAt !== undefined) {
    if (!Number.isFinite(Date.parse(expiresAt))) throw new Refusal(400, "Invalid Stream-Expires-At timestamp");
    return { expiresAt };
  }
  return {};
}

/** Producer-Id, Producer-Epoch and Producer-Seq: all three or none. */
export function producerHeaders(request: Request): ProducerTuple | undefined {
  const id = header(request, H.producerId);
  const epoch = header(request, H.producerEpoch);
  const seq = header(request, H.producerSeq);
  if (id === undefined && epoch === undefined && seq === undefined) return undefined;
  if (id === undefined || epoch === undefined || seq === undefined) {
    throw new Refusal(400, "All producer headers (Producer-Id, Producer-Epoch, Producer-Seq) must be provided together");
  }
  if (id === "") throw new Refusal(400, "Invalid Producer-Id: must not be empty");
  const epochNumber = DIGITS.test(epoch) ? Number(epoch) : NaN;
  if (!Number.isSafeInteger(epochNumber)) throw new Refusal(400, "Invalid Producer-Epoch: must be a non-negative integer");
  const seqNumber = DIGITS.test(seq) ? Number(seq) : NaN;
  if (!Number.isSafeInteger(seqNumber)) throw new Refusal(400, "Invalid Producer-Seq: must be a non-negative integer");
  return { id, epoch: epochNumber, seq: seqNumber };
}

/** Where a GET reads from and how: the `offset`, `live` and `cursor` query parameters. */
export function readQuery(url: URL): { from: ReadFrom; offsetParam: string; live?: "long-poll" | "sse"; cursor?: string } {
  const offsets = url.searchParams.getAll("offset");
  if (offsets.length > 1) throw new Refusal(400, "Multiple offset parameters not allowed");
  const offsetParam = offsets[0];
  const liveParam = url.searchParams.get("live");
  const live = liveParam === "long-poll" || liveParam === "sse" ? liveParam : undefined;
  if (offsetParam === "") throw new Refusal(400, "Empty offset parameter");
  if (live && offsetParam === undefined) throw new Refusal(400, `${live === "sse" ? "SSE" : "Long-poll"} requires offset parameter`);
  const from = offsetParam === undefined ? { after: 0 } : parseOffset(offsetParam);
  if (!from) throw new Refusal(400, "Invalid offset format");
  const cursor = url.searchParams.get("cursor") ?? undefined;
  if (cursor !== undefined && cursor.length > LIMITS.STREAMS_HTTP_HEADER_MAX_LENGTH) throw new Refusal(400, "cursor is too long");
  return { from, offsetParam: offsetParam ?? "-1", ...(live ? { live } : {}), ...(cursor !== undefined ? { cursor } : {}) };
}

/**
 * The request body, read up to STREAMS_HTTP_BODY_MAX_BYTES: a declared or actual larger body is
 * refused with 413 without reading the rest, and one still arriving after
 * STREAMS_HTTP_BODY_READ_TIMEOUT_MS (`timeoutMs`) with 408, so a client that trickles bytes does
 * not hold its request open.
 */
export async function boundedBody(request: Request, timeoutMs: number = LIMITS.STREAMS_HTTP_BODY_READ_TIMEOUT_MS): Promise<Uint8Array> {
  const max = LIMITS.STREAMS_HTTP_BODY_MAX_BYTES;
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > max) throw new Refusal(413, `a request body is at most ${max} bytes (STREAMS_HTTP_BODY_MAX_BYTES)`);
  if (!request.body) return new Uint8Array(0);
  const started = Date.now();
  const inTime = <T>(read: Promise<T>) =>
    raceDeadline(read, timeoutMs - (Date.now() - started), (): never => {
      throw new Refusal(408, `a request body must arrive within ${timeoutMs} ms (STREAMS_HTTP_BODY_READ_TIMEOUT_MS)`);
    });
  // A body framed by its declared length (no chunked transfer) is read in one native call: the
  // HTTP layer delivers exactly that many bytes, and the length was checked above.
  const lengthOnly = request.headers.has("content-length") && !request.headers.has("transfer-encoding") && Number.isSafeInteger(declared) && declared >= 0;
  if (lengthOnly) {
    const body = new Uint8Array(await inTime(request.arrayBuffer()));
    if (body.byteLength > max) throw new Refusal(413, `a request body is at most ${max} bytes (STREAMS_HTTP_BODY_MAX_BYTES)`);
    return body;
  }
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let step: ReadableStreamReadResult<Uint8Array>;
    try {
      step = await inTime(reader.read());
    } catch (error) {
      void reader.cancel().catch(() => undefined);
      throw error;
    }
    const { done, value } = step;
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new Refusal(413, `a request body is at most ${max} bytes (STREAMS_HTTP_BODY_MAX_BYTES)`);
    }
    parts.push(value);
  }
  if (parts.length === 1) return parts[0] as Uint8Array;
  const body = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    body.set(part, at);
    at += part.byteLength;
  }
  return body;
}

/** Stream-Cursor for a live response: the current 20 s interval, moved past a cursor the client already holds (CDN collapsing). */
export function responseCursor(clientCursor: string | undefined, now = Date.now()): string {
  const interval = Math.floor((now - Date.UTC(2024, 9, 9)) / 20_000);
  const client = clientCursor !== undefined && DIGITS.test(clientCursor) ? Number(clientCursor) : NaN;
  if (!Number.isSafeInteger(client) || client < interval) return String(interval);
  return String(client + 1 + Math.floor(Math.random() * 180));
}
