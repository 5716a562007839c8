import { newWebSocketRpcSession } from "capnweb";
import { describe, expect, test } from "vitest";
import type { UnauthenticatedRoot } from "iterate/types";
import { expectCode } from "iterate/stream/test-support";
import { openApiSocket } from "../../test/api-socket.ts";

// oxlint-disable typescript/no-explicit-any -- the session is driven through dynamic stubs

const ADMIN = { type: "admin-secret", secret: "workerd-test-secret" } as const;

async function openSession(): Promise<{ root: any; closed: Promise<{ code: number; reason: string }> }> {
  const { socket, closed } = await openApiSocket();
  return { root: newWebSocketRpcSession<UnauthenticatedRoot>(socket), closed };
}

describe("authenticate on a WebSocket", () => {
  test("a connection carries one session: a second authenticate is refused (each would watch its credential until close), the first session still serves", async () => {
    const { root } = await openSession();
    // A failed attempt does not count: the connection is not authenticated yet.
    await expectCode(root.authenticate({ type: "admin-secret", secret: "wrong" }).__describe(), "UNAUTHENTICATED");
    const session = root.authenticate(ADMIN);
    expect((await session.__describe()).kind).toBe("session");
    for (let i = 0; i < 3; i++) await expectCode(root.authenticate(ADMIN).__describe(), "INVALID_ARGUMENT");
    // Two at once on a fresh connection: one session, one refusal.
    const other = await openSession();
    const outcomes = await Promise.all([other.root.authenticate(ADMIN).__describe(), other.root.authenticate(ADMIN).__describe()].map((call) => call.then(() => "session", (error: { code?: string }) => error.code)));
    expect(outcomes.toSorted()).toEqual(["INVALID_ARGUMENT", "session"]);
    expect((await session.__describe()).kind).toBe("session");
    root[Symbol.dispose]();
    other.root[Symbol.dispose]();
  });

  test("a session made with a bearer token ends when the token expires, though the socket stays open (4001, the reason says why)", async () => {
    const admin = await openSession();
    const { token } = await admin.root.authenticate(ADMIN).tokens.issue({ principal: "short-lived", projectIds: [], ttlSeconds: 2 });
    const { root, closed } = await openSession();
    const session = root.authenticate({ type: "bearer", token });
    expect((await session.__describe()).kind).toBe("session");
    const started = Date.now();
    const { code, reason } = await closed;
    expect(code).toBe(4001);
    expect(reason).toContain("the credential expired");
    expect(Date.now() - started).toBeLessThan(3_500);
    admin.root[Symbol.dispose]();
  });
});
