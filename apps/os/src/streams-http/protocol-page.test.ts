import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { LIMITS } from "../limits.ts";
import { eventsOfBody } from "./message-mapping.ts";
import type { ProtocolRequest } from "./protocol-api.ts";
import { readPage } from "./protocol-page.ts";

// A JSON-mode page is bounded twice: STREAMS_HTTP_READ_PAGE_EVENTS events, and
// STREAMS_HTTP_READ_PAGE_BYTES of payload text. Most pages end on the event limit and are built
// over a plain range; a page whose events are too large for that takes the running-sum road. Both
// roads must render the same events the same way.

let counter = 0;
const fresh = () => `prj_page${Date.now()}${++counter}:/paged`;
const stamp = { principal: "http-writer", origin: "/" };
const json = (text: string, creating = false) => eventsOfBody(new TextEncoder().encode(text), "application/json", creating);
type Answer = { ok: true; value: { status: number } } | { ok: false };
const http = (name: string, request: ProtocolRequest) => (env.STREAM.getByName(name) as unknown as { http(request: ProtocolRequest): Promise<Answer> }).http(request);

async function created(name: string): Promise<void> {
  expect(await http(name, { op: "create", contentType: "application/json", closed: false, body: json("[]", true), stamp })).toMatchObject({ ok: true, value: { status: 201 } });
}

async function append(name: string, messages: unknown[]): Promise<void> {
  expect(await http(name, { op: "append", contentType: "application/json", close: false, body: json(JSON.stringify(messages)), stamp })).toMatchObject({ ok: true, value: { status: 204 } });
}

function page(name: string, after: number): Promise<{ body: unknown[]; last: number; count: number }> {
  return runInDurableObject(env.STREAM.getByName(name), (_instance, state) => {
    const { body, last, count } = readPage(state.storage.sql, "/paged", after, "application/json");
    return { body: JSON.parse(body as string) as unknown[], last, count };
  });
}

describe("JSON-mode read pages", () => {
  test(`a page holds at most STREAMS_HTTP_READ_PAGE_EVENTS (${LIMITS.STREAMS_HTTP_READ_PAGE_EVENTS}) events, and the next one goes on from there`, async () => {
    const name = fresh();
    await created(name);
    const total = LIMITS.STREAMS_HTTP_READ_PAGE_EVENTS + 10;
    for (let start = 0; start < total; start += 500) await append(name, Array.from({ length: Math.min(500, total - start) }, (_, i) => start + i));
    const first = await page(name, 0);
    expect(first.count).toBe(LIMITS.STREAMS_HTTP_READ_PAGE_EVENTS);
    expect(first.last).toBe(LIMITS.STREAMS_HTTP_READ_PAGE_EVENTS);
    expect(first.body.length).toBe(first.count);
    expect(first.body.slice(0, 3)).toEqual([0, 1, 2]);
    expect(first.body.at(-1)).toBe(LIMITS.STREAMS_HTTP_READ_PAGE_EVENTS - 1);
    const second = await page(name, first.last);
    expect(second).toEqual({ body: Array.from({ length: 10 }, (_, i) => LIMITS.STREAMS_HTTP_READ_PAGE_EVENTS + i), last: total, count: 10 });
    expect(await page(name, total)).toEqual({ body: [], last: total, count: 0 });
  });

  test(`a page holds at most STREAMS_HTTP_READ_PAGE_BYTES (${LIMITS.STREAMS_HTTP_READ_PAGE_BYTES}) of payload, and renders other writers' events as on the event-limited road`, async () => {
    const name = fresh();
    await created(name);
    // Another writer's event first: a JSON-mode reader sees the whole event object.
    await streamStub(env.STREAM, name).append({ events: [{ type: "demo/noted", payload: { note: 1 } }], stamp: { principal: "capnweb-writer", origin: "/" } });
    const small = await page(name, 0);
    expect(small.count).toBe(1);
    const noted = small.body[0];
    expect(noted).toMatchObject({ streamPath: "/paged", offset: 1, type: "demo/noted", payload: { note: 1 }, source: { principal: "capnweb-writer", origin: "/" } });

    const big = "x".repeat(200_000);
    for (let batch = 0; batch < 5; batch++) await append(name, Array.from({ length: 5 }, (_, i) => `${batch * 5 + i}:${big}`));
    // 1 small event, then 25 messages of about 200 KB: the byte limit ends the page first.
    const paged = await page(name, 0);
    const payloadBytes = 200_000 + 5;
    const fitting = Math.floor((LIMITS.STREAMS_HTTP_READ_PAGE_BYTES - JSON.stringify({ note: 1 }).length) / payloadBytes);
    expect(fitting).toBeLessThan(25);
    expect(paged.count).toBe(1 + fitting);
    expect(paged.body[0]).toEqual(noted);
    expect(paged.body.slice(1).map((message) => String(message).split(":")[0])).toEqual(Array.from({ length: fitting }, (_, i) => String(i)));
    const rest = await page(name, paged.last);
    expect(rest.count).toBe(25 - fitting);
    expect(rest.last).toBe(26);
  });
});
