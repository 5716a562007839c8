import { describe, expect, test } from "vitest";
import { errorCode, errorMessage } from "../errors/index.ts";
import { ItxWebSocketTransport, SESSION_ENDED_CLOSE_CODE } from "./websocket-transport.ts";

// A socket that is already open and closes when the test says: enough for the transport's
// listeners, with no server needed.
class OpenSocket extends EventTarget {
  readonly readyState = WebSocket.OPEN;
  send(): void {}
  close(): void {}
  closeFromServer(code: number, reason: string): void {
    this.dispatchEvent(Object.assign(new Event("close"), { code, reason, wasClean: true }));
  }
}

async function failureAfterClose(code: number, reason: string): Promise<unknown> {
  const socket = new OpenSocket();
  const transport = new ItxWebSocketTransport(socket as unknown as WebSocket, "http://127.0.0.1:9");
  const received = transport.receive().then(
    () => undefined,
    (error: unknown) => error,
  );
  socket.closeFromServer(code, reason);
  return received;
}

describe("ItxWebSocketTransport", () => {
  test("the OS ending the session (close 4001) is UNAUTHENTICATED, reason revoked, with the OS's words", async () => {
    const failure = await failureAfterClose(SESSION_ENDED_CLOSE_CODE, "the browser session was signed out");
    expect(errorCode(failure)).toBe("UNAUTHENTICATED");
    expect(errorMessage(failure)).toBe("the OS at http://127.0.0.1:9 ended this session: the browser session was signed out");
    expect((failure as { details?: unknown }).details).toEqual({ reason: "revoked", url: "http://127.0.0.1:9" });
  });

  test("any other close stays UNAVAILABLE, connection-closed", async () => {
    const failure = await failureAfterClose(1011, "internal error");
    expect(errorCode(failure)).toBe("UNAVAILABLE");
    expect((failure as { details?: unknown }).details).toMatchObject({ reason: "connection-closed" });
  });
});
