import { RpcSession, type RpcSessionOptions } from "capnweb";
import { ItxError, errorCode } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";
import { readRequestBody } from "../limits/request-body.ts";
import { logUncoded } from "../logging/log-limiter.ts";
import { codedErrorResponse } from "./coded-response.ts";
import { Connection } from "./connection.ts";
import { serveBatch } from "./batch-session.ts";
import { GuardedWebSocketTransport } from "./guarded-websocket-transport.ts";

/**
 * Terminates Cap'n Web for one request: a WebSocket upgrade becomes a long-lived session, any
 * other POST one HTTP batch. `makeRoot` builds the object the client sees first. Every message
 * passes the message guard (size, the budget before authentication, shape) before capnweb parses
 * it; input that fails answers a coded 400 (HTTP) or closes the socket with the coded reason.
 */
export async function serveCapnWeb(
  request: Request,
  ctx: ExecutionContext,
  makeRoot: (connection: Connection) => object,
): Promise<Response> {
  const waitUntil = (promise: Promise<unknown>) => ctx.waitUntil(promise);
  if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
    const pair = new WebSocketPair();
    const server = pair[1];
    // 4001: the server ended the session (its credential was revoked); the reason says why.
    const connection = new Connection("websocket", waitUntil, (reason) => server.close(4001, reason.slice(0, 120)));
    server.accept();
    // A socket that never authenticates is closed once API_AUTHENTICATE_WITHIN_MS pass.
    const unauthenticatedFor = setTimeout(() => {
      if (connection.authenticated || connection.closed) return;
      try {
        server.close(4008, `authenticate within ${LIMITS.API_AUTHENTICATE_WITHIN_MS} ms (API_AUTHENTICATE_WITHIN_MS)`);
      } catch {
        // Already closing (the guard closed it): nothing more to end.
      }
    }, LIMITS.API_AUTHENTICATE_WITHIN_MS);
    server.addEventListener("close", () => {
      clearTimeout(unauthenticatedFor);
      connection.close();
    });
    server.addEventListener("error", () => {
      clearTimeout(unauthenticatedFor);
      connection.close();
    });
    const transport = new GuardedWebSocketTransport(server as unknown as WebSocket, () => connection.authenticated);
    // The session lives as long as the socket: the transport's listeners keep it reachable.
    void new RpcSession(transport, makeRoot(connection), SESSION_OPTIONS);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }
  if (request.method !== "POST") {
    return new Response("POST a Cap'n Web batch, or open a WebSocket, to use /api\n", {
      status: 405,
      headers: { allow: "POST" },
    });
  }
  let lines: string[];
  try {
    lines = await readBatch(request);
  } catch (error) {
    return codedErrorResponse(error, "uncaught error serving an /api batch");
  }
  const connection = new Connection("http-batch", waitUntil);
  try {
    return await serveBatch(lines, makeRoot(connection), SESSION_OPTIONS);
  } catch (error) {
    return codedErrorResponse(error, "uncaught error serving an /api batch");
  } finally {
    connection.close();
  }
}

// The body, within API_HTTP_BATCH_MAX_BYTES and API_BODY_READ_TIMEOUT_MS, as lines. A batch is
// read whole before it authenticates, so `serveBatch` holds every line to the unauthenticated budget.
async function readBatch(request: Request): Promise<string[]> {
  const limit = LIMITS.API_HTTP_BATCH_MAX_BYTES;
  const tooLarge = () =>
    new ItxError("INVALID_ARGUMENT", `a Cap'n Web batch is at most ${limit} bytes`, { details: limitDetails("API_HTTP_BATCH_MAX_BYTES") });
  const body = await readRequestBody(request, limit, LIMITS.API_BODY_READ_TIMEOUT_MS, tooLarge);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body);
  } catch {
    throw new ItxError("INVALID_ARGUMENT", "a Cap'n Web batch is UTF-8 text");
  }
  // Each line passes the message guard in `serveBatch`.
  return text === "" ? [] : text.split("\n");
}

const SESSION_OPTIONS: RpcSessionOptions = {
  // The guard admits nothing larger; this is capnweb's own check of the same bound.
  limits: { maxMessageSize: LIMITS.API_MESSAGE_MAX_CHARS },
  onSendError(error) {
    // Coded errors are expected outcomes and go to the client as they are. Anything else is a bug
    // somewhere in the OS: log it here, where the stack is still known (rate-limited: a client can
    // provoke it again and again).
    if (errorCode(error) === undefined) logUncoded("uncoded error sent over /api", error);
  },
};
