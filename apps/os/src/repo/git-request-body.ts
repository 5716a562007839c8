import { ItxError, errorMessage } from "iterate/errors";
import { LIMITS, limitDetails, type LimitName } from "../limits.ts";
import { concat } from "../bytes.ts";

/**
 * A push's body as read: whole, or (past `GIT_HTTP_BODY_MAX_BYTES`) only its head, which holds the
 * ref commands, and the refusal to report for them.
 */
export interface PushBody {
  bytes: Uint8Array;
  /**
   * Set when the push is refused whole: larger than a push may be (INVALID_ARGUMENT), or past the
   * isolate's room for pushes (UNAVAILABLE). `bytes` is then only its head.
   */
  refused?: ItxError;
  /** Gives back this body's share of GIT_HTTP_PUSH_BYTES_IN_FLIGHT_MAX; call it once the push is answered. */
  release(): void;
}

// Bytes of push bodies this isolate holds now (read, kept, not yet released), and the leases that
// hold them. The Worker serves every project: one project's pushes must not take the memory
// everyone's requests share.
let inFlight = 0;
const leases = new Set<PushLease>();

/**
 * A body's share of the isolate's push bytes, taken as it is read. Released when the push is
 * answered, or after GIT_HTTP_PUSH_LEASE_MAX_MS whatever happened: a request whose client went
 * away may never run its `finally`.
 */
class PushLease {
  #bytes = 0;
  readonly #taken = Date.now();

  /** Holds `bytes` more; UNAVAILABLE (nothing more held) past GIT_HTTP_PUSH_BYTES_IN_FLIGHT_MAX. */
  grow(bytes: number): void {
    const now = Date.now();
    for (const lease of leases) if (lease !== this && now - lease.#taken > LIMITS.GIT_HTTP_PUSH_LEASE_MAX_MS) lease.release();
    if (inFlight + bytes > LIMITS.GIT_HTTP_PUSH_BYTES_IN_FLIGHT_MAX) {
      throw new ItxError("UNAVAILABLE", "the OS is receiving other large pushes right now; push again in a moment", { details: limitDetails("GIT_HTTP_PUSH_BYTES_IN_FLIGHT_MAX") });
    }
    inFlight += bytes;
    this.#bytes += bytes;
    leases.add(this);
  }

  /** Holds at most `bytes` in all. */
  shrinkTo(bytes: number): void {
    const kept = Math.min(bytes, this.#bytes);
    inFlight -= this.#bytes - kept;
    this.#bytes = kept;
    if (kept === 0) leases.delete(this);
  }

  release(): void {
    this.shrinkTo(0);
  }
}

/** Bytes of push bodies held in this isolate now (tests). */
export function pushBytesInFlight(): number {
  return inFlight;
}

/** Bytes of an oversized push kept to read its commands from (GIT_HTTP_REF_UPDATES_MAX + 1 of the longest refs fit). */
const PUSH_HEAD_BYTES = 262_144;

/**
 * A git request's body (upload-pack's negotiation), at most `max` bytes after any gzip is undone;
 * past it, INVALID_ARGUMENT naming `limit`. The rest is left unread: a client that gets no answer
 * until it is done sending stops reading only when its own send fails.
 */
export async function readGitBody(request: Request, max: number, limit: LimitName): Promise<Uint8Array> {
  const tooLarge = () => new ItxError("INVALID_ARGUMENT", `the request body is larger than ${max} bytes`, { details: limitDetails(limit) });
  if (declaredLength(request) > max) throw tooLarge();
  const reader = bodyReader(request);
  if (!reader) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await readChunk(reader);
    if (done) return concat(chunks);
    total += value.byteLength;
    if (total > max) {
      reader.releaseLock();
      throw tooLarge();
    }
    chunks.push(value);
  }
}

/**
 * A push's body. Past `GIT_HTTP_BODY_MAX_BYTES` the rest is read and dropped (up to
 * `GIT_HTTP_REFUSED_BODY_DRAIN_MAX_BYTES` in all) so that git, which reads no answer before it has
 * sent everything, gets the refusal as a report it prints rather than a broken pipe; so is one
 * that finds GIT_HTTP_PUSH_BYTES_IN_FLIGHT_MAX full (UNAVAILABLE). Past the drain bound (read, or
 * declared), or past the limit in a gzip body, the refusal is thrown instead.
 */
export async function readPushBody(request: Request): Promise<PushBody> {
  const max = LIMITS.GIT_HTTP_BODY_MAX_BYTES;
  const refused = new ItxError("INVALID_ARGUMENT", `a push is at most ${max} bytes (GIT_HTTP_BODY_MAX_BYTES): push the history in parts, a few commits at a time`, {
    details: limitDetails("GIT_HTTP_BODY_MAX_BYTES"),
  });
  // A declared length is drained like a streamed one (git declares one when the push fits its
  // http.postBuffer), unless even the drain would stop short of it.
  const declared = declaredLength(request);
  if (declared > LIMITS.GIT_HTTP_REFUSED_BODY_DRAIN_MAX_BYTES || (declared > max && gzipped(request))) throw refused;
  const lease = new PushLease();
  const release = () => lease.release();
  const reader = bodyReader(request);
  if (!reader) return { bytes: new Uint8Array(0), release };
  const chunks: Uint8Array[] = [];
  let head: Uint8Array | null = null;
  let refusal: ItxError | null = null;
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await readChunk(reader);
      if (done) break;
      total += value.byteLength;
      if (refusal === null && total <= max) {
        try {
          lease.grow(value.byteLength);
          chunks.push(value);
          continue;
        } catch (busy) {
          // Other pushes hold the isolate's room: refused like an oversized push, after the drain.
          refusal = busy as ItxError;
        }
      }
      refusal ??= refused;
      // A gzip body is not drained: what it inflates to is not what was sent (and git sends a push plain).
      if (total > LIMITS.GIT_HTTP_REFUSED_BODY_DRAIN_MAX_BYTES || gzipped(request)) throw refusal;
      if (head === null) {
        head = headOf([...chunks, value]);
        chunks.length = 0;
        lease.shrinkTo(head.byteLength);
      }
    }
  } catch (error) {
    lease.release();
    reader.releaseLock();
    throw error;
  }
  return head && refusal ? { bytes: head, refused: refusal, release } : { bytes: concat(chunks), release };
}

/** The first PUSH_HEAD_BYTES of `chunks`, as one array. */
function headOf(chunks: Uint8Array[]): Uint8Array {
  const kept: Uint8Array[] = [];
  let length = 0;
  for (const chunk of chunks) {
    if (length >= PUSH_HEAD_BYTES) break;
    kept.push(chunk);
    length += chunk.byteLength;
  }
  return concat(kept).slice(0, PUSH_HEAD_BYTES);
}

/** The next chunk; a body that breaks off or does not inflate (bad gzip) is INVALID_ARGUMENT, not an uncoded 500. */
async function readChunk(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<ReadableStreamReadResult<Uint8Array>> {
  try {
    return await reader.read();
  } catch (error) {
    throw new ItxError("INVALID_ARGUMENT", `the request body could not be read: ${errorMessage(error).slice(0, 200)}`);
  }
}

function gzipped(request: Request): boolean {
  return request.headers.get("content-encoding") === "gzip";
}

function declaredLength(request: Request): number {
  return Number(request.headers.get("content-length") ?? "0");
}

function bodyReader(request: Request): ReadableStreamDefaultReader<Uint8Array> | null {
  let stream = request.body;
  if (!stream) return null;
  const encoding = request.headers.get("content-encoding");
  if (gzipped(request)) stream = stream.pipeThrough(new DecompressionStream("gzip"));
  else if (encoding !== null && encoding !== "identity") throw new ItxError("INVALID_ARGUMENT", `content-encoding ${encoding.slice(0, 32)} is not supported`);
  return stream.getReader();
}
