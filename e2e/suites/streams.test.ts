import { describe, expect } from "vitest";
import { test } from "../harness/fixtures.ts";
import { connectItx } from "iterate/client";
import type { StreamEvent } from "iterate/types";
import { adminSession, target } from "../harness/os.ts";
import { expectCode } from "iterate/stream/test-support";

const unique = () => `/e2e/${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

describe("deployment-wide streams through the session (admin)", () => {
  test("append, read back, and the session principal is stamped", async ({ admin: session }) => {
    const stream = session.streams.get(unique());
    const written = await stream.append({ type: "demo/ping", payload: { n: 1 } }, { type: "demo/ping", payload: { n: 2 } });
    expect(written.map((event: StreamEvent) => event.offset)).toEqual([1, 2]);
    expect(written[0]?.source).toEqual({ principal: "admin" });
    const read = await stream.getEvents({ afterOffset: 1 });
    expect(read.map((event: StreamEvent) => event.payload)).toEqual([{ n: 2 }]);
  });

  test("coded errors keep their code across Workers RPC and Cap'n Web", async ({ admin: session }) => {
    const stream = session.streams.get(unique());
    await stream.append({ type: "demo/a", idempotencyKey: "k" });
    await expectCode(stream.append({ type: "demo/b", idempotencyKey: "k" }), "IDEMPOTENCY_CONFLICT");
    await expectCode(stream.appendBatch({ events: [{ type: "demo/c" }], expectedOffset: 0 }), "OFFSET_CONFLICT");
    await expectCode(stream.getEvents({ afterOffset: -1 }), "INVALID_ARGUMENT");
    await expectCode(stream.append({ type: "Bad Type" }), "INVALID_ARGUMENT");
    await expectCode(stream.waitForEvent({ type: "demo/never", timeoutMs: 20 }), "TIMEOUT");
    await expectCode(session.streams.get("no-slash"), "INVALID_ARGUMENT");
    expect(await stream.head()).toBe(1);
  });

  test("a Node callback receives replay then the live tail, including ephemeral events", async ({ admin: session }) => {
    const stream = session.streams.get(unique());
    await stream.append({ type: "demo/a" });
    const seen: string[] = [];
    await stream.subscribe((batch: StreamEvent[]) => {
      for (const event of batch) seen.push(`${event.offset}:${event.type}${event.ephemeral ? "~" : ""}`);
    });
    await stream.append({ type: "demo/poke", ephemeral: true });
    await stream.append({ type: "demo/b" });
    await expect.poll(() => seen).toEqual(["1:demo/a", "1:demo/poke~", "2:demo/b"]);
  });

  test("waitForEvent resolves when a matching event is appended by another client", async ({ admin: session }) => {
    using other = adminSession();
    const path = unique();
    const waiting = session.streams.get(path).waitForEvent({ type: "demo/settled", payload: { requestOffset: 3 }, timeoutMs: 10_000 });
    await new Promise((done) => setTimeout(done, 50));
    await other.streams.get(path).append({ type: "demo/settled", payload: { requestOffset: 3, status: "succeeded" } });
    expect((await waiting).payload).toEqual({ requestOffset: 3, status: "succeeded" });
  });

  test("readEvents pages through a stream", async ({ admin: session }) => {
    const stream = session.streams.get(unique());
    await stream.append(...Array.from({ length: 250 }, (_, i) => ({ type: "demo/n", payload: { i } })));
    const offsets: number[] = [];
    let afterOffset = 0;
    for (;;) {
      const page = await stream.readEvents({ afterOffset, limit: 100 });
      offsets.push(...page.events.map((event: StreamEvent) => event.offset));
      afterOffset = page.nextAfterOffset;
      if (page.done) break;
    }
    expect(offsets).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
  });

  test("a non-admin principal cannot reach deployment-wide streams", async () => {
    const { baseUrl, adminSecret } = target();
    using session = connectItx({ baseUrl, auth: { type: "impersonate", secret: adminSecret, principal: "eve", projectIds: [] } });
    await expectCode(session.streams.get("/anything").head(), "NOT_FOUND");
    expect(Object.keys((await session.__describe()).children)).not.toContain("streams");
  });
});

test("appendBatch answers a compact receipt, with idempotent repeats at their first offset", async () => {
  using session = adminSession();
  const stream = session.streams.get(unique());
  const receipt = await stream.appendBatch({
    events: [{ type: "demo/a", idempotencyKey: "x" }, { type: "demo/b" }, { type: "demo/a", idempotencyKey: "x" }],
  });
  expect(receipt).toEqual({ offsets: [1, 2, 1], head: 2 });
  await expectCode(stream.appendBatch({ events: [], extra: 1 } as never), "INVALID_ARGUMENT");
});
