import { exports } from "cloudflare:workers";
import { RpcSession, RpcTarget, newWebSocketRpcSession } from "capnweb";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { LIMITS } from "../limits.ts";
import { serveBatch } from "./batch-session.ts";
import { GuardedWebSocketTransport } from "./guarded-websocket-transport.ts";
import { HeldResults } from "./held-results.ts";
import { openApiSocket } from "../../test/api-socket.ts";

// oxlint-disable typescript/no-explicit-any -- sessions driven by raw frames and dynamic stubs

const HELD_MAX = 20_000;
const saved = LIMITS.API_SESSION_HELD_RESULTS_MAX_CHARS;
beforeEach(() => {
  Object.assign(LIMITS as Record<string, number>, { API_SESSION_HELD_RESULTS_MAX_CHARS: HELD_MAX });
});
afterEach(() => {
  Object.assign(LIMITS as Record<string, number>, { API_SESSION_HELD_RESULTS_MAX_CHARS: saved });
});

class Child extends RpcTarget {
  echo(value: string): string {
    return value;
  }
}

class Root extends RpcTarget {
  calls = 0;
  big(length: number): string {
    this.calls += 1;
    return "x".repeat(length);
  }
  ping(): string {
    this.calls += 1;
    return "pong";
  }
  child(): Child {
    return new Child();
  }
  async nested(): Promise<{ child: Child; note: string }> {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { child: new Child(), note: "later" };
  }
  fail(): never {
    throw new Error("refused on purpose");
  }
}

type Pair = WebSocket & { accept(): void };

// The OS's end of a socket (the guarded transport under a capnweb session, authenticated) and the client's.
function openSession(): { client: Pair; server: RpcSession; root: Root; frames: unknown[][]; closed: Promise<{ code: number; reason: string }> } {
  const [client, serverSocket] = Object.values(new WebSocketPair()) as [Pair, Pair];
  serverSocket.accept();
  client.accept();
  const root = new Root();
  const server = new RpcSession(new GuardedWebSocketTransport(serverSocket, () => true), root);
  const frames: unknown[][] = [];
  client.addEventListener("message", (event) => {
    frames.push(JSON.parse(event.data as string));
  });
  const closed = new Promise<{ code: number; reason: string }>((done) => {
    client.addEventListener("close", (event) => done({ code: event.code, reason: event.reason }));
  });
  return { client, server, root, frames, closed };
}

const settle = (ms = 20) => new Promise((resolve) => setTimeout(resolve, ms));
const push = (method: string, args: unknown[] = []) => JSON.stringify(["push", ["pipeline", 0, [method], args]]);

describe("answers a session holds unreleased (API_SESSION_HELD_RESULTS_MAX_CHARS)", () => {
  test("a client that pushes calls and never pulls or releases them is cut off once their answers pass the limit", async () => {
    const { client, root, frames, closed } = openSession();
    // Each answer is about 6,000 characters: three fit under 20,000, the fourth does not.
    for (let i = 0; i < 6; i++) client.send(push("big", [6000]));
    const { code, reason } = await closed;
    expect(code).toBe(1008);
    expect(reason).toContain("RESOURCE_EXHAUSTED");
    // Calls after the cut-off are not taken (the session ends with the socket).
    expect(root.calls).toBeGreaterThanOrEqual(4);
    // The answers sent before the cut-off went out unasked (the OS pulls every call itself).
    expect(frames.filter((frame) => frame[0] === "resolve").map((frame) => frame[1])).toEqual([1, 2, 3]);
  });

  test("a client that pulls but never releases is held to the same limit", async () => {
    const { client, closed } = openSession();
    for (let i = 1; i <= 6; i++) {
      client.send(push("big", [6000]));
      client.send(JSON.stringify(["pull", i]));
    }
    expect((await closed).reason).toContain("RESOURCE_EXHAUSTED");
  });

  test("answers to promises the OS exported inside an answer (negative ids) count too, until the client releases them", () => {
    // capnweb sends such an answer unasked (it resolves every promise it exports) and keeps it until released.
    const held = new HeldResults();
    expect(held.answering(-3, 15_000)).toBeUndefined();
    expect(held.chars).toBe(15_000);
    expect(held.answering(-4, 6000)?.details).toEqual({ limit: "API_SESSION_HELD_RESULTS_MAX_CHARS" });
    held.released(-3);
    expect(held.chars).toBe(0);
    expect(held.answering(-4, 6000)).toBeUndefined();
    // A positive id is weighed only while it is a call the client has not released.
    expect(held.answering(9, 6000)).toBeUndefined();
    expect(held.chars).toBe(6000);
  });

  test("releases give the room back: a client that releases each answer makes any number of large calls", async () => {
    const { client, server, frames } = openSession();
    for (let i = 1; i <= 20; i++) {
      client.send(push("big", [6000]));
      while (!frames.some((frame) => frame[0] === "resolve" && frame[1] === i)) await settle(1);
      client.send(JSON.stringify(["release", i, 1]));
    }
    await settle();
    expect(frames.filter((frame) => frame[0] === "resolve")).toHaveLength(20);
    // Only the session's main object is left exported.
    expect(server.getStats().exports).toBe(1);
  });

  test("a capnweb client is served as before: awaited calls, pipelined handles, calls nobody awaits, stubs inside results, errors; and the OS lets go of every result", async () => {
    const { client, server, root } = openSession();
    const stub: any = newWebSocketRpcSession(client);
    const child = stub.child();
    expect(await child.echo("a")).toBe("a");
    expect(await stub.child().echo("pipelined")).toBe("pipelined");
    // Calls nobody awaits: answered and released all the same (they used to be held until the socket closed).
    for (let i = 0; i < 50; i++) void stub.ping();
    const failing = stub.fail();
    const nested = await stub.nested();
    expect(nested.note).toBe("later");
    expect(await nested.child.echo("c")).toBe("c");
    nested[Symbol.dispose]();
    await expect(failing).rejects.toThrow("refused on purpose");
    expect(await child.echo("b")).toBe("b");
    expect(await stub.big(HELD_MAX - 100)).toHaveLength(HELD_MAX - 100);
    await settle(50);
    expect(root.calls).toBe(51);
    // Left exported: the main object and the child handle the client still holds.
    expect(server.getStats().exports).toBeLessThanOrEqual(3);
    child[Symbol.dispose]();
    stub[Symbol.dispose]();
  });
});

const root = () => new Root();

describe("an HTTP batch holds its answers until it responds", () => {

  test("answers to calls the client pulled are the response; answers it did not pull are weighed and left out", async () => {
    const lines = [push("ping"), push("big", [100]), JSON.stringify(["pull", 2])];
    const body = await (await serveBatch(lines, root(), {})).text();
    const messages = body.split("\n").map((line) => JSON.parse(line));
    expect(messages).toEqual([["resolve", 2, "x".repeat(100)]]);
  });

  test("a batch whose answers pass the limit is refused with RESOURCE_EXHAUSTED, pulled or not", async () => {
    const unpulled = Array.from({ length: 5 }, () => push("big", [6000]));
    await expect(serveBatch(unpulled, root(), {})).rejects.toMatchObject({ code: "RESOURCE_EXHAUSTED", details: { limit: "API_SESSION_HELD_RESULTS_MAX_CHARS" } });
    const pulled = [...unpulled, ...unpulled.map((_line, i) => JSON.stringify(["pull", i + 1]))];
    await expect(serveBatch(pulled, root(), {})).rejects.toMatchObject({ code: "RESOURCE_EXHAUSTED" });
    // Under the limit, the same calls are served.
    const body = await (await serveBatch([push("big", [6000]), JSON.stringify(["pull", 1])], root(), {})).text();
    expect(JSON.parse(body)[2]).toHaveLength(6000);
  });

  test("every line passes the message guard: a batch is held to the unauthenticated budget", async () => {
    await expect(serveBatch(["not json"], root(), {})).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    const many = Array.from({ length: LIMITS.API_UNAUTHENTICATED_MESSAGES_MAX + 1 }, () => push("ping"));
    await expect(serveBatch(many, root(), {})).rejects.toMatchObject({ details: { limit: "API_UNAUTHENTICATED_MESSAGES_MAX" } });
  });
});

describe("through the OS's /api", () => {
  const authenticate = JSON.stringify(["push", ["pipeline", 0, ["authenticate"], [{ type: "admin-secret", secret: "workerd-test-secret" }]]]);
  const describeSession = JSON.stringify(["push", ["pipeline", 1, ["__describe"], []]]);

  test("a WebSocket session that keeps pushing calls and never releases their answers is closed: 1008 RESOURCE_EXHAUSTED", async () => {
    const { socket, closed } = await openApiSocket();
    socket.send(authenticate);
    // Each description of the session is a few hundred characters: 20,000 hold well under 1,000 of them.
    for (let i = 0; i < 1000; i++) socket.send(describeSession);
    const { code, reason } = await closed;
    expect(code).toBe(1008);
    expect(reason).toContain("RESOURCE_EXHAUSTED");
  });

  test("an HTTP batch whose answers pass the limit answers 400 RESOURCE_EXHAUSTED; one under it is served", async () => {
    const over = [authenticate, ...Array.from({ length: 200 }, () => describeSession)].join("\n");
    const refused = await exports.default.fetch("http://os.test/api", { method: "POST", body: over });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: "RESOURCE_EXHAUSTED" });
    const served = await exports.default.fetch("http://os.test/api", { method: "POST", body: [authenticate, describeSession, JSON.stringify(["pull", 2])].join("\n") });
    expect(served.status).toBe(200);
    const [answer] = (await served.text()).split("\n").map((line) => JSON.parse(line));
    expect(answer[0]).toBe("resolve");
    expect(answer[1]).toBe(2);
  });
});
