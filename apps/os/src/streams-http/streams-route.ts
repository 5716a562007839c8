import type { EventSource } from "iterate/types";
import { errorCode, errorMessage } from "iterate/errors";
import { unwrapCoded } from "../api/coded-result.ts";
import { parseStreamPath } from "../stream/coordinate.ts";
import { findProject } from "../project/project-directory.ts";
import { ProjectAccess } from "../project/project-collection.ts";
import { logUncoded } from "../logging/log-limiter.ts";
import { HEADERS as H, type ForkSource, type ProtocolAnswer, type ProtocolRequest } from "./protocol-api.ts";
import { decodeJsonBody, eventsOfBody, isJsonMode } from "./message-mapping.ts";
import { parseOffset } from "./offsets.ts";
import { authenticateRequest } from "../auth/request-auth.ts";
import { Refusal, boundedBody, createContentType, expiry, header, producerHeaders, readQuery, responseCursor } from "./request-parsing.ts";
import { serveSse } from "./sse.ts";
import { LIVE_REQUESTS } from "./live-requests.ts";
import { LIMITS } from "../limits.ts";
import { corsHeaders, corsPreflight, withCors } from "./cors.ts";
import { ShortCache } from "../auth/request-cache.ts";

const projects = new ShortCache<Awaited<ReturnType<typeof findProject>>>();

/** Where every stream is served over the Durable Streams protocol: `/streams/<project slug or id>/<stream path>`. */
export const STREAMS_ROUTE_PREFIX = "/streams/";

/** How long a long-poll or an SSE wait holds before answering that nothing came, unless STREAMS_LIVE_WAIT_MS says otherwise. */
export const LIVE_WAIT_MS = 20_000;

function liveWaitMs(env: Env): number {
  const configured = Number(env.STREAMS_LIVE_WAIT_MS);
  return Number.isSafeInteger(configured) && configured >= 100 && configured <= 60_000 ? configured : LIVE_WAIT_MS;
}

interface StreamTarget {
  http(request: ProtocolRequest): Promise<unknown>;
}

/**
 * The Durable Streams HTTP protocol on every stream a principal may reach. Authenticated by bearer
 * token on every request (no unauthenticated mode); a stream of a project the caller may not reach
 * answers exactly as a missing stream does. Writes are stamped with the caller and go through the
 * Stream's ordinary append path.
 */
export async function serveStreams(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  if (request.method === "OPTIONS") return corsPreflight();
  try {
    return withCors(await serve(request, env, ctx));
  } catch (error) {
    return withCors(failure(error));
  }
}

async function serve(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  const url = new URL(request.url);
  const rest = url.pathname.slice(STREAMS_ROUTE_PREFIX.length);
  const slash = rest.indexOf("/");
  const principal = await authenticateRequest(env, request);
  // A segment that is not valid percent-encoding names no project: the missing stream's answer.
  const project = decodeSegment(slash < 0 ? rest : rest.slice(0, slash));
  let path: string;
  try {
    path = parseStreamPath(slash < 0 || slash === rest.length - 1 ? "/" : rest.slice(slash));
  } catch (error) {
    return text(400, errorMessage(error));
  }
  const record = project !== undefined && project.length > 0 && project.length <= 128 ? await projects.get(project, () => findProject(env, project)) : undefined;
  // Missing and forbidden are one answer, built from nothing but what the caller sent.
  if (!record || !new ProjectAccess(principal).allows(record)) return text(404, "Stream not found");
  const stamp: EventSource = { principal: principal.id, origin: "/" };
  const target = (streamPath: string) => env.STREAM.getByName(`${record.projectId}:${streamPath}`) as unknown as StreamTarget;
  const call = async (streamPath: string, operation: ProtocolRequest) => unwrapCoded((await target(streamPath).http(operation)) as never) as ProtocolAnswer;
  const stream = (operation: ProtocolRequest) => call(path, operation);

  switch (request.method) {
    case "PUT":
      return create(request, stamp, path, call);
    case "POST": {
      const contentType = header(request, "content-type");
      const streamSeq = header(request, H.seq);
      const producer = producerHeaders(request);
      const close = header(request, H.closed) === "true";
      const body = await boundedBody(request);
      if (body.length === 0 && !close) return text(400, "Empty body");
      if (body.length > 0 && !contentType) return text(400, "Content-Type header is required");
      return respond(
        await stream({
          op: "append",
          close,
          stamp,
          // JSON mode: decoded here, parsed once by the Stream (message-mapping.ts, JsonBody).
          ...(contentType !== undefined && body.length > 0 ? { contentType, body: isJsonMode(contentType) ? decodeJsonBody(body) : eventsOfBody(body, contentType, false) } : {}),
          ...(streamSeq !== undefined ? { streamSeq } : {}),
          ...(producer ? { producer } : {}),
        }),
      );
    }
    case "HEAD": {
      const answer = await stream({ op: "head" });
      return respond({ ...answer, body: undefined });
    }
    case "GET": {
      const query = readQuery(url);
      if (query.live !== undefined && !LIVE_REQUESTS.enter(principal.id)) {
        const limit = LIVE_REQUESTS.refusal ?? "STREAMS_HTTP_LIVE_REQUESTS_MAX";
        const busy = text(503, `${limit === "STREAMS_HTTP_LIVE_REQUESTS_MAX" ? "this isolate" : "this caller"} holds ${LIMITS[limit]} live reads already (${limit})`);
        busy.headers.set("retry-after", "1");
        return busy;
      }
      if (query.live === "sse") return serveSse(ctx, request, query, (operation) => stream(operation), liveWaitMs(env), () => LIVE_REQUESTS.leave(principal.id));
      let answer: ProtocolAnswer;
      try {
        answer = await stream({ op: "read", from: query.from, offsetParam: query.offsetParam, waitMs: liveWaitMs(env), ...(query.live ? { live: query.live } : {}) });
      } finally {
        if (query.live !== undefined) LIVE_REQUESTS.leave(principal.id);
      }
      if (query.live === "long-poll" && answer.status < 300) answer.headers[H.cursor] = responseCursor(query.cursor);
      const etag = answer.headers.etag;
      if (etag !== undefined && answer.status === 200 && request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers: corsHeaders({ etag }) });
      return respond(answer);
    }
    case "DELETE": {
      const answer = await stream({ op: "delete" });
      // A deleted fork releases its source, which may finish a delete that waited for it, and so on.
      for (let next = answer.release, hops = 0; next !== undefined && hops < 64; hops++) next = (await call(next, { op: "release" })).release;
      return respond(answer);
    }
    default:
      return text(405, "Method not allowed");
  }
}

async function create(
  request: Request,
  stamp: EventSource,
  path: string,
  call: (path: string, operation: ProtocolRequest) => Promise<ProtocolAnswer>,
): Promise<Response> {
  const contentType = createContentType(request);
  const { ttlSeconds, expiresAt } = expiry(request);
  const closed = header(request, H.closed) === "true";
  const fork = await forkHeaders(request);
  const body = await boundedBody(request);
  let source: ForkSource | undefined;
  if (fork) {
    const answer = await call(fork.from, { op: "fork-source", ...(fork.offset !== undefined ? { offset: fork.offset } : {}), ...(fork.subOffset ? { subOffset: fork.subOffset } : {}) });
    if (!answer.fork) return respond(answer.status === 404 ? { ...answer, body: "Source stream not found" } : answer);
    source = { from: fork.from, ...answer.fork, ...(fork.offsetParam ? { offsetParam: fork.offsetParam } : {}), ...(fork.subOffset ? { subOffset: fork.subOffset } : {}) };
  }
  const effectiveType = contentType ?? source?.contentType ?? "application/octet-stream";
  let answer: ProtocolAnswer;
  try {
    answer = await call(path, {
      op: "create",
      closed,
      stamp,
      body: eventsOfBody(body, effectiveType, true),
      ...(contentType !== undefined ? { contentType } : {}),
      ...(ttlSeconds !== undefined ? { ttlSeconds } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      ...(source ? { fork: source } : {}),
    });
  } catch (error) {
    if (source) await call(source.from, { op: "release" });
    throw error;
  }
  // The source counted this fork when it answered; anything but a new fork gives that back.
  if (source && answer.status !== 201) await call(source.from, { op: "release" });
  if (answer.status === 201) answer.headers.location = new URL(request.url).href;
  return respond(answer);
}

async function forkHeaders(request: Request): Promise<{ from: string; offset?: number; offsetParam?: string; subOffset?: number } | undefined> {
  const from = header(request, H.forkedFrom);
  const offsetParam = header(request, H.forkOffset);
  const sub = header(request, H.forkSubOffset);
  if (from === undefined) {
    if (sub !== undefined) throw new Refusal(400, "Stream-Fork-Sub-Offset requires Stream-Forked-From");
    return undefined;
  }
  let path: string;
  try {
    path = parseStreamPath(from);
  } catch (error) {
    throw new Refusal(400, errorMessage(error));
  }
  const parsed = offsetParam === undefined ? undefined : parseOffset(offsetParam);
  if (offsetParam !== undefined && (!parsed || !("after" in parsed) || offsetParam === "-1")) throw new Refusal(400, "Invalid Stream-Fork-Offset format");
  let subOffset: number | undefined;
  if (sub !== undefined) {
    if (!/^(0|[1-9]\d*)$/.test(sub) || !Number.isSafeInteger(Number(sub))) throw new Refusal(400, "Invalid Stream-Fork-Sub-Offset format");
    subOffset = Number(sub);
    if (subOffset > 0 && offsetParam === undefined) throw new Refusal(400, "Stream-Fork-Sub-Offset requires Stream-Fork-Offset");
  }
  return {
    from: path,
    ...(parsed && "after" in parsed ? { offset: parsed.after, offsetParam: offsetParam as string } : {}),
    ...(subOffset ? { subOffset } : {}),
  };
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function respond(answer: ProtocolAnswer): Response {
  const body = answer.status === 204 || answer.status === 304 ? null : (answer.body ?? null);
  const headers = body !== null && answer.headers["content-type"] === undefined ? { ...answer.headers, "content-type": "text/plain" } : answer.headers;
  return new Response(body, { status: answer.status, headers: corsHeaders(headers) });
}

function text(status: number, message: string): Response {
  return new Response(message, { status, headers: corsHeaders({ "content-type": "text/plain" }) });
}

const STATUS_OF_CODE: Record<string, number> = {
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  IDEMPOTENCY_CONFLICT: 409,
  OFFSET_CONFLICT: 409,
  LOOP_LIMIT: 429,
  UNAVAILABLE: 503,
};

/** A refusal or a coded error as the protocol's status with a plain-text reason; anything else is ours (500, logged). */
function failure(error: unknown): Response {
  if (error instanceof Refusal) return text(error.status, error.message);
  const code = errorCode(error);
  if (code !== undefined) {
    const response = text(STATUS_OF_CODE[code] ?? 400, `${code}: ${errorMessage(error)}`);
    if (code === "UNAUTHENTICATED") response.headers.set("www-authenticate", 'Bearer realm="iterate"');
    return response;
  }
  logUncoded("serving a Durable Streams request", error);
  return text(500, "the OS could not serve this request");
}
