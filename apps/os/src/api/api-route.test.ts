import { exports } from "cloudflare:workers";
import { newHttpBatchRpcSession, newWebSocketRpcSession } from "capnweb";
import { afterEach, describe, expect, test } from "vitest";
import type { UnauthenticatedRoot } from "iterate/types";
import { LIMITS } from "../limits.ts";

describe("/api over HTTP batch inside workerd", () => {
  test("authenticate and describe in one batch", async () => {
    const root = newHttpBatchRpcSession<UnauthenticatedRoot>(
      new Request("http://os.test/api", { fetcher: exports.default } as RequestInit),
    );
    // Pipelined: authenticate and __describe travel in the same batch.
    const description = await root.authenticate({ type: "admin-secret", secret: "workerd-test-secret" }).__describe();
    expect(description.principal).toEqual({ kind: "admin", id: "admin" });
  });

  test("GET /api explains how to use it", async () => {
    const response = await exports.default.fetch("http://os.test/api");
    expect(response.status).toBe(405);
    expect(await response.text()).toMatch(/Cap'n Web/);
  });

  test("the bench root is not reachable unless enabled", async () => {
    const response = await exports.default.fetch("http://os.test/api/bench", { method: "POST", body: "[]" });
    expect(response.status).toBe(404);
  });

  test("unknown routes answer a coded 404", async () => {
    const response = await exports.default.fetch("http://os.test/nope");
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: "NOT_FOUND", message: "no such route" });
  });
});

async function post(body: BodyInit): Promise<{ status: number; text: string }> {
  const response = await exports.default.fetch("http://os.test/api", { method: "POST", body });
  return { status: response.status, text: await response.text() };
}

describe("hostile input at /api answers coded, without stack or file paths", () => {
  test.each([
    ["not JSON", "garbage"],
    ["truncated JSON", '["push", '],
    ["a JSON object", "{}"],
    ["an unknown message kind", '["launch", 1]'],
    ["control bytes", "\u0000\u0001\u0002"],
    ["a valid line then garbage", '["pull", 1]\n%%%'],
    ["invalid UTF-8", new Uint8Array([0x5b, 0xff, 0xfe, 0x5d])],
  ])("%s: 400 INVALID_ARGUMENT", async (_name, body) => {
    const { status, text } = await post(body);
    expect(status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(text).not.toMatch(/\bat \w|\.ts:|\.js:|node_modules|\/work\//);
  });

  test(`a batch past API_HTTP_BATCH_MAX_BYTES (${LIMITS.API_HTTP_BATCH_MAX_BYTES}) is refused before it is parsed`, async () => {
    const line = JSON.stringify(["push", ["pipeline", 0, ["authenticate"], [{ type: "admin-secret", secret: "x".repeat(1000) }]]]);
    const body = Array.from({ length: Math.ceil(LIMITS.API_HTTP_BATCH_MAX_BYTES / line.length) + 1 }, () => line).join("\n");
    const { status, text } = await post(body);
    expect(status).toBe(400);
    expect(JSON.parse(text)).toEqual({ code: "INVALID_ARGUMENT", message: `a Cap'n Web batch is at most ${LIMITS.API_HTTP_BATCH_MAX_BYTES} bytes` });
  });

  test(`a batch of more than API_UNAUTHENTICATED_MESSAGES_MAX (${LIMITS.API_UNAUTHENTICATED_MESSAGES_MAX}) messages is refused`, async () => {
    const body = Array.from({ length: LIMITS.API_UNAUTHENTICATED_MESSAGES_MAX + 1 }, () => '["pull",1]').join("\n");
    const { status, text } = await post(body);
    expect(status).toBe(400);
    expect(JSON.parse(text).message).toContain(String(LIMITS.API_UNAUTHENTICATED_MESSAGES_MAX));
  });

  test("an ordinary batch still works after the guard", async () => {
    const root = newHttpBatchRpcSession<UnauthenticatedRoot>(new Request("http://os.test/api", { fetcher: exports.default } as RequestInit));
    const description = await root.authenticate({ type: "admin-secret", secret: "workerd-test-secret" }).__describe();
    expect(description.kind).toBe("session");
  });
});

// The Worker runs in this isolate: a test lowers a limit the route reads at each request.
const lower = (name: keyof typeof LIMITS, value: number) => ((LIMITS as Record<string, number>)[name] = value);

describe("what an unauthenticated client can hold open", () => {
  const saved = { ...LIMITS };
  afterEach(() => Object.assign(LIMITS, saved));

  test("API_BODY_READ_TIMEOUT_MS: a batch body that trickles and never ends is answered TIMEOUT", async () => {
    lower("API_BODY_READ_TIMEOUT_MS", 300);
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    void writer.write(new TextEncoder().encode('["pull", 1]'));
    const started = Date.now();
    const response = await exports.default.fetch("http://os.test/api", { method: "POST", body: readable, duplex: "half" } as RequestInit);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "TIMEOUT" });
    expect(Date.now() - started).toBeLessThan(5_000);
    void writer.close().catch(() => undefined);
  });

  test("API_AUTHENTICATE_WITHIN_MS: a WebSocket that never authenticates is closed with 4008", async () => {
    lower("API_AUTHENTICATE_WITHIN_MS", 300);
    const response = await exports.default.fetch("http://os.test/api", { headers: { upgrade: "websocket" } });
    const socket = response.webSocket as WebSocket;
    expect(socket).toBeTruthy();
    const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })));
    socket.accept();
    const started = Date.now();
    const { code, reason } = await closed;
    expect(code).toBe(4008);
    expect(reason).toContain("API_AUTHENTICATE_WITHIN_MS");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test("a WebSocket that authenticates in time stays open past API_AUTHENTICATE_WITHIN_MS", async () => {
    lower("API_AUTHENTICATE_WITHIN_MS", 300);
    const response = await exports.default.fetch("http://os.test/api", { headers: { upgrade: "websocket" } });
    const socket = response.webSocket as WebSocket;
    let closedWith: number | undefined;
    socket.addEventListener("close", (event) => (closedWith = event.code));
    socket.accept();
    const session = newWebSocketRpcSession<UnauthenticatedRoot>(socket);
    const root = session.authenticate({ type: "admin-secret", secret: "workerd-test-secret" });
    expect((await root.__describe()).principal).toEqual({ kind: "admin", id: "admin" });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(closedWith).toBeUndefined();
    expect((await root.__describe()).principal).toEqual({ kind: "admin", id: "admin" });
    session[Symbol.dispose]();
  });
});
