import { describe, expect } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import type { SessionDescription, StreamEvent } from "iterate/types";
import { test } from "../harness/fixtures.ts";

function streamPath(name: string): string {
  return `/hostile/${name}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
}

describe("hostile input is bounded and coded", () => {
  test("getEvents with more types than READ_MAX_TYPES (64), 101 included, is INVALID_ARGUMENT, not a SQLite error", async ({ admin: session }) => {
    const stream = session.streams.get(streamPath("types"));
    await stream.append({ type: "demo/t1", payload: {} });
    const types = Array.from({ length: 101 }, (_, i) => `demo/t${i}`);
    for (const count of [65, 100, 101]) {
      const error = await expectCode(stream.getEvents({ afterOffset: 0, types: types.slice(0, count) }), "INVALID_ARGUMENT", String(count));
      expect(error.message).toContain("at most 64 types");
      expect(error.message).not.toMatch(/sqlite|SQL/i);
      await expectCode(stream.waitForEvent({ types: types.slice(0, count), timeoutMs: 0 }), "INVALID_ARGUMENT");
    }
    const allowed = await stream.getEvents({ afterOffset: 0, types: types.slice(0, 64) });
    expect(allowed.map((event: StreamEvent) => event.type)).toEqual(["demo/t1"]);
  });

  test("a lone surrogate in a payload, a key or an idempotency key is refused at append; nothing is stored", async ({ admin: session }) => {
    const stream = session.streams.get(streamPath("surrogates"));
    for (const input of [
      { type: "demo/a", payload: { text: "x\ud800y" } },
      { type: "demo/a", payload: { ["k\udc00"]: 1 } },
      { type: "demo/a", payload: { list: ["ok", "\udbff"] } },
      { type: "demo/a", idempotencyKey: "key-\ud800" },
    ]) {
      await expectCode(stream.append(input), "INVALID_ARGUMENT", JSON.stringify(input));
    }
    expect(await stream.getEvents({ afterOffset: 0 })).toEqual([]);
    await stream.append({ type: "demo/a", payload: { text: "😀 𝄞" } });
    const [event] = await stream.getEvents({ afterOffset: 0 });
    expect(event?.payload).toEqual({ text: "😀 𝄞" });
  });

  test("POST /api with garbage answers 400 with a code, and no stack or file path", async ({ os: { baseUrl } }) => {
    for (const body of ["garbage", "{}", '["push", ', "\u0000\u0001", '["launch",1]']) {
      const response = await fetch(`${baseUrl}/api`, { method: "POST", body });
      const text = await response.text();
      expect(response.status, body).toBe(400);
      expect(JSON.parse(text).code, body).toBe("INVALID_ARGUMENT");
      expect(text, body).not.toMatch(/\bat \w|\.ts:|\.js:|node_modules|\/work\/|<html/i);
    }
  });

  test("a WebSocket frame past the unauthenticated budget closes the socket with a coded reason", async ({ os: { baseUrl } }) => {
    const socket = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/api`);
    await new Promise((open, fail) => {
      socket.addEventListener("open", open);
      socket.addEventListener("error", fail);
    });
    const closed = new Promise<{ code: number; reason: string }>((done) => socket.addEventListener("close", (event) => done({ code: event.code, reason: event.reason })));
    socket.send("x".repeat(4_194_305));
    const { code, reason } = await closed;
    expect(code).toBe(1009);
    expect(reason).toContain("[INVALID_ARGUMENT]");
  });

  test("an authenticated peer that pushes calls and never releases them is cut off at API_SESSION_OUTSTANDING_CALLS_MAX (10,000)", { timeout: 60_000 }, async ({ os: { baseUrl, admin } }) => {
    const socket = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/api`);
    await new Promise((open, fail) => {
      socket.addEventListener("open", open);
      socket.addEventListener("error", fail);
    });
    const closed = new Promise<{ code: number; reason: string }>((done) => socket.addEventListener("close", (event) => done({ code: event.code, reason: event.reason })));
    const answers: string[] = [];
    socket.addEventListener("message", (event) => answers.push(String(event.data)));
    // Import 1 is the session; every later push is a __describe on it whose result is never released.
    socket.send(JSON.stringify(["push", ["pipeline", 0, ["authenticate"], [admin]]]));
    socket.send(JSON.stringify(["pull", 1]));
    for (let i = 0; i < 100 && answers.length === 0; i++) await new Promise((done) => setTimeout(done, 50));
    expect(answers[0]).toMatch(/^\["resolve",1,/);
    for (let i = 0; i < 10_001; i++) socket.send(JSON.stringify(["push", ["pipeline", 1, ["__describe"], []]]));
    const { code, reason } = await closed;
    expect(code).toBe(1008);
    expect(reason).toContain("[RESOURCE_EXHAUSTED]");
    expect((await fetch(`${baseUrl}/health`)).ok).toBe(true);
  });

  test("a client that makes more calls than API_SESSION_OUTSTANDING_CALLS_MAX on one session is unaffected: it releases each result", { timeout: 120_000 }, async ({ admin: session }) => {
    let answered = 0;
    for (let batch = 0; batch < 51; batch++) {
      const described = await Promise.all(Array.from({ length: 200 }, () => session.__describe()));
      answered += described.filter((description: SessionDescription) => description.kind === "session").length;
    }
    expect(answered).toBe(10_200);
  });

  test("an authenticated client pipelining right after connecting is unaffected by the guard", async ({ admin: session }) => {
    const stream = session.streams.get(streamPath("pipelined"));
    const big = "z".repeat(200_000);
    await Promise.all(Array.from({ length: 20 }, (_, i) => stream.append({ type: "demo/big", payload: { i, big } })));
    expect((await stream.getEvents({ afterOffset: 0, limit: 500 })).length).toBe(20);
  });

  test("an unknown route and a bad method answer coded, without the runtime's error page", async ({ os: { baseUrl } }) => {
    const missing = await fetch(`${baseUrl}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ code: "NOT_FOUND", message: "no such route" });
  });
});
