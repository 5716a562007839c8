import { exports } from "cloudflare:workers";
import { expect } from "vitest";

/** A WebSocket on the OS's /api, accepted, and a promise of its close code and reason. */
export async function openApiSocket(): Promise<{ socket: WebSocket; closed: Promise<{ code: number; reason: string }> }> {
  const response = await exports.default.fetch("http://os.test/api", { headers: { upgrade: "websocket" } });
  expect(response.status).toBe(101);
  const socket = response.webSocket as unknown as WebSocket & { accept(): void };
  socket.accept();
  const closed = new Promise<{ code: number; reason: string }>((done) => {
    socket.addEventListener("close", (event) => done({ code: event.code, reason: event.reason }));
  });
  return { socket, closed };
}
