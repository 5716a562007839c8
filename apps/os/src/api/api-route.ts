import { newHttpBatchRpcResponse, newWebSocketRpcSession, type RpcSessionOptions } from "capnweb";
import { errorCode } from "iterate/errors";
import { Connection } from "./connection.ts";

/**
 * Terminates Cap'n Web for one request: a WebSocket upgrade becomes a long-lived session, any
 * other POST one HTTP batch. `makeRoot` builds the object the client sees first.
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
    server.addEventListener("close", () => connection.close());
    server.addEventListener("error", () => connection.close());
    newWebSocketRpcSession(server as unknown as WebSocket, makeRoot(connection), SESSION_OPTIONS);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }
  if (request.method !== "POST") {
    return new Response("POST a Cap'n Web batch, or open a WebSocket, to use /api\n", {
      status: 405,
      headers: { allow: "POST" },
    });
  }
  const connection = new Connection("http-batch", waitUntil);
  try {
    return await newHttpBatchRpcResponse(request, makeRoot(connection), SESSION_OPTIONS);
  } finally {
    connection.close();
  }
}

const SESSION_OPTIONS: RpcSessionOptions = {
  onSendError(error) {
    // Coded errors are expected outcomes and go to the client as they are. Anything else is a bug
    // somewhere in the OS: log it here, where the stack is still known.
    if (errorCode(error) === undefined) console.error("uncoded error sent over /api:", error);
  },
};
