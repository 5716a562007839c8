import { newWebSocketRpcSession } from "capnweb";
import { describe, expect, test } from "vitest";
import type { UnauthenticatedRoot } from "iterate/types";
import { LIMITS } from "../limits.ts";
import { GuardedWebSocketTransport } from "./guarded-websocket-transport.ts";
import { MessageBudget } from "./message-guard.ts";
import { openApiSocket } from "../../test/api-socket.ts";

// oxlint-disable typescript/no-explicit-any -- the session is driven by raw frames and dynamic stubs

describe("the WebSocket message guard", () => {
  test(`before authentication, more than API_UNAUTHENTICATED_CHARS_MAX (${LIMITS.API_UNAUTHENTICATED_CHARS_MAX}) characters closes the socket: 1009 INVALID_ARGUMENT`, async () => {
    const { socket, closed } = await openApiSocket();
    socket.send("x".repeat(LIMITS.API_UNAUTHENTICATED_CHARS_MAX + 1));
    const { code, reason } = await closed;
    expect(code).toBe(1009);
    expect(reason).toContain("[INVALID_ARGUMENT]");
  });

  test("a frame that is not a Cap'n Web message closes the socket: 1008 INVALID_ARGUMENT", async () => {
    for (const frame of ["garbage", "{}", '["launch"]', "[1,2]"]) {
      const { socket, closed } = await openApiSocket();
      socket.send(frame);
      const { code, reason } = await closed;
      expect(code, frame).toBe(1008);
      expect(reason, frame).toContain("[INVALID_ARGUMENT]");
    }
    const { socket, closed } = await openApiSocket();
    socket.send(new Uint8Array([1, 2, 3]));
    expect((await closed).code).toBe(1008);
  });

  test(`a peer that keeps failing to authenticate is cut off after API_UNAUTHENTICATED_MESSAGES_MAX (${LIMITS.API_UNAUTHENTICATED_MESSAGES_MAX}) messages`, async () => {
    const { socket, closed } = await openApiSocket();
    const root: any = newWebSocketRpcSession<UnauthenticatedRoot>(socket);
    const attempts = Array.from({ length: LIMITS.API_UNAUTHENTICATED_MESSAGES_MAX }, () =>
      root.authenticate({ type: "admin-secret", secret: "wrong" }).then(
        () => "authenticated",
        (error: Error) => error.message,
      ),
    );
    const outcomes: string[] = await Promise.all(attempts);
    expect(outcomes.some((message) => message.includes("UNAUTHENTICATED"))).toBe(true);
    expect(outcomes.some((message) => /API_UNAUTHENTICATED_MESSAGES_MAX|1008|before authenticate\(\) succeeds/.test(message))).toBe(true);
    expect(outcomes).not.toContain("authenticated");
    // A count past its budget is a policy violation (1008); 1009 is kept for what was too large.
    const { code, reason } = await closed;
    expect(code).toBe(1008);
    expect(reason).toContain("before authenticate() succeeds");
  });

  test("after authenticate() succeeds the budget relaxes: a message larger than the unauthenticated budget is served", async () => {
    const { socket } = await openApiSocket();
    const root: any = newWebSocketRpcSession<UnauthenticatedRoot>(socket);
    const session = root.authenticate({ type: "admin-secret", secret: "workerd-test-secret" });
    expect((await session.__describe()).kind).toBe("session");
    const big = "y".repeat(LIMITS.API_UNAUTHENTICATED_CHARS_MAX + 10);
    // An extra argument is ignored by __describe; the frame carrying it must still be admitted.
    expect((await session.__describe(big)).kind).toBe("session");
    root[Symbol.dispose]();
  });

  test("the budget counts only before authentication, and every frame is held to API_MESSAGE_MAX_CHARS", () => {
    let authenticated = false;
    const budget = new MessageBudget(() => authenticated);
    expect(budget.admit('["pull",1]')).toBeUndefined();
    expect(budget.admit("x".repeat(LIMITS.API_UNAUTHENTICATED_CHARS_MAX))?.details).toEqual({ limit: "API_UNAUTHENTICATED_CHARS_MAX" });
    authenticated = true;
    expect(budget.admit(JSON.stringify(["push", "z".repeat(LIMITS.API_UNAUTHENTICATED_CHARS_MAX)]))).toBeUndefined();
    expect(budget.admit("x".repeat(LIMITS.API_MESSAGE_MAX_CHARS + 1))?.details).toEqual({ limit: "API_MESSAGE_MAX_CHARS" });
  });

  test("an authenticated session holds at most API_SESSION_OUTSTANDING_CALLS_MAX unreleased calls; releases give room back", () => {
    const budget = new MessageBudget(() => true);
    const push = JSON.stringify(["push", ["pipeline", 0, ["whoami"], []]]);
    for (let i = 0; i < LIMITS.API_SESSION_OUTSTANDING_CALLS_MAX; i++) expect(budget.admit(push)).toBeUndefined();
    // Releasing an export of the OS's own (a negative id) gives nothing back; releasing the client's does.
    expect(budget.admit('["release",-1,1]')).toBeUndefined();
    const over = budget.admit(push);
    expect(over?.code).toBe("RESOURCE_EXHAUSTED");
    expect(over?.details).toEqual({ limit: "API_SESSION_OUTSTANDING_CALLS_MAX" });
    const fresh = new MessageBudget(() => true);
    for (let i = 1; i <= LIMITS.API_SESSION_OUTSTANDING_CALLS_MAX * 2; i++) {
      expect(fresh.admit(push)).toBeUndefined();
      expect(fresh.admit(JSON.stringify(["release", i, 1]))).toBeUndefined();
    }
  });

  test("take answers the message as parsed, so capnweb gets it without a second parse; a refusal is the coded error", () => {
    const budget = new MessageBudget(() => true);
    const frame = JSON.stringify(["push", ["pipeline", 0, ["append"], [{ type: "demo/x", payload: { text: 'a "quoted" line' } }]]]);
    expect(budget.take(frame)).toEqual(JSON.parse(frame));
    const refused = budget.take('["launch"]');
    expect(refused).toBeInstanceOf(Error);
    expect((refused as { code?: string }).code).toBe("INVALID_ARGUMENT");
  });

  test("the wire is capnweb's JSON text both ways: a value capnweb encodes arrives decoded, answers come back as JSON frames", async () => {
    const { socket } = await openApiSocket();
    const frames: string[] = [];
    socket.addEventListener("message", (event) => {
      frames.push(event.data as string);
    });
    const root: any = newWebSocketRpcSession<UnauthenticatedRoot>(socket);
    const session = root.authenticate({ type: "admin-secret", secret: "workerd-test-secret" });
    const stream = session.streams.get("/wire/encoding");
    // The Stream refuses these payloads, but only after capnweb on the OS side decoded them: the
    // coded error names what it received.
    const refusal = await stream.append({ type: "demo/x", payload: { at: new Date(0) } }).catch((error: Error) => error.message);
    expect(refusal).toMatch(/INVALID_ARGUMENT.*Date/);
    const [event] = await stream.append({ type: "demo/x", payload: { n: 1, s: "line\n\"quoted\"" } });
    expect(event.payload).toEqual({ n: 1, s: "line\n\"quoted\"" });
    expect(frames.length).toBeGreaterThan(0);
    for (const frame of frames) expect(Array.isArray(JSON.parse(frame))).toBe(true);
    root[Symbol.dispose]();
  });

  test("every value capnweb encodes in JSON arrives decoded on the OS side (bigint, Infinity, NaN, bytes, undefined, -0), and an abort from the client ends the session", async () => {
    const { socket, closed } = await openApiSocket();
    const root: any = newWebSocketRpcSession<UnauthenticatedRoot>(socket);
    const session = root.authenticate({ type: "admin-secret", secret: "workerd-test-secret" });
    const stream = session.streams.get("/wire/values");
    const refused = async (payload: unknown) => stream.append({ type: "demo/x", payload: { v: payload } }).then(() => "stored", (error: Error) => error.message);
    expect(await refused(10n)).toMatch(/INVALID_ARGUMENT.*bigint/);
    expect(await refused(Number.POSITIVE_INFINITY)).toMatch(/INVALID_ARGUMENT.*Infinity/);
    expect(await refused(Number.NEGATIVE_INFINITY)).toMatch(/INVALID_ARGUMENT.*-Infinity/);
    expect(await refused(Number.NaN)).toMatch(/INVALID_ARGUMENT.*NaN/);
    expect(await refused(new Uint8Array([1, 2, 3]))).toMatch(/INVALID_ARGUMENT.*Uint8Array/);
    expect(await refused([undefined])).toMatch(/INVALID_ARGUMENT.*undefined/);
    const [event] = await stream.append({ type: "demo/x", payload: { gone: undefined, zero: -0, date: "2026-12-01" } });
    expect(event.payload).toEqual({ zero: 0, date: "2026-12-01" });
    // A client's abort: the OS ends the session and closes the socket.
    socket.send(JSON.stringify(["abort", ["error", "Error", "client is done"]]));
    const { code } = await closed;
    expect(code).toBe(3000);
  });

  test("stream calls count as outstanding until the OS answers them (capnweb releases them itself): unanswered ones are held to API_SESSION_OUTSTANDING_CALLS_MAX", () => {
    const stream = JSON.stringify(["stream", ["pipeline", 0, ["whoami"], []]]);
    const push = JSON.stringify(["push", ["pipeline", 0, ["whoami"], []]]);
    const held = new MessageBudget(() => true);
    for (let i = 0; i < LIMITS.API_SESSION_OUTSTANDING_CALLS_MAX; i++) expect(held.admit(stream)).toBeUndefined();
    expect(held.admit(stream)?.details).toEqual({ limit: "API_SESSION_OUTSTANDING_CALLS_MAX" });
    // Answered as they come: never past the bound.
    const answered = new MessageBudget(() => true);
    for (let id = 1; id <= LIMITS.API_SESSION_OUTSTANDING_CALLS_MAX * 2; id++) {
      expect(answered.admit(stream)).toBeUndefined();
      answered.answered(id);
    }
    // Ids follow arrival order across kinds: answering a push frees nothing (it counts until released).
    const mixed = new MessageBudget(() => true);
    expect(mixed.admit(push)).toBeUndefined(); // id 1
    for (let i = 1; i < LIMITS.API_SESSION_OUTSTANDING_CALLS_MAX; i++) expect(mixed.admit(stream)).toBeUndefined(); // ids 2..MAX
    mixed.answered(1);
    expect(mixed.admit(stream)?.code).toBe("RESOURCE_EXHAUSTED");
    const freed = new MessageBudget(() => true);
    expect(freed.admit(push)).toBeUndefined();
    for (let i = 1; i < LIMITS.API_SESSION_OUTSTANDING_CALLS_MAX; i++) expect(freed.admit(stream)).toBeUndefined();
    freed.answered(2);
    expect(freed.admit(stream)).toBeUndefined();
    // A stream call the client released itself is not taken away twice.
    const released = new MessageBudget(() => true);
    expect(released.admit(stream)).toBeUndefined(); // id 1
    expect(released.admit('["release",1,1]')).toBeUndefined();
    released.answered(1);
    for (let i = 0; i < LIMITS.API_SESSION_OUTSTANDING_CALLS_MAX; i++) expect(released.admit(stream)).toBeUndefined();
    expect(released.admit(stream)?.code).toBe("RESOURCE_EXHAUSTED");
  });

  test("the transport tells the budget when it sends an answer: a socket full of stream calls takes more once one is answered", async () => {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket & { accept(): void }, WebSocket & { accept(): void }];
    server.accept();
    client.accept();
    let closed = false;
    client.addEventListener("close", () => {
      closed = true;
    });
    const transport = new GuardedWebSocketTransport(server, () => true);
    const stream = JSON.stringify(["stream", ["pipeline", 0, ["whoami"], []]]);
    for (let i = 0; i < LIMITS.API_SESSION_OUTSTANDING_CALLS_MAX; i++) client.send(stream);
    for (let i = 0; i < LIMITS.API_SESSION_OUTSTANDING_CALLS_MAX; i++) await transport.receive();
    transport.send(["resolve", 7, "answered"]);
    client.send(stream);
    expect(await transport.receive()).toEqual(JSON.parse(stream));
    client.send(stream);
    await expect(transport.receive()).rejects.toMatchObject({ code: "RESOURCE_EXHAUSTED" });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(closed).toBe(true);
  });

  test("a release must be a whole count of at least 1: a fractional one would keep capnweb's export alive while the count let it go", () => {
    const push = JSON.stringify(["push", ["pipeline", 0, ["whoami"], []]]);
    const budget = new MessageBudget(() => true);
    for (let i = 0; i < LIMITS.API_SESSION_OUTSTANDING_CALLS_MAX; i++) expect(budget.admit(push)).toBeUndefined();
    for (const release of ['["release",1,0.999]', '["release",1,0]', '["release",1,-1]', '["release",1.5,1]', '["release",1,"1"]', '["release","1",1]', '["release",1]']) {
      expect(new MessageBudget(() => true).admit(release)?.code, release).toBe("INVALID_ARGUMENT");
      expect(budget.admit(release)?.code, release).toBe("INVALID_ARGUMENT");
    }
    // Nothing refused was counted as released: the session is still full.
    expect(budget.admit(push)?.code).toBe("RESOURCE_EXHAUSTED");
    expect(new MessageBudget(() => true).admit('["release",-3,2]')).toBeUndefined();
  });
});
