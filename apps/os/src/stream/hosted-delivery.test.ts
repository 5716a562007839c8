import type { StreamEvent } from "iterate/types";
import { describe, expect, test } from "vitest";
import { HostedDelivery, type ProcessorSession } from "./hosted-delivery.ts";

// HostedDelivery on its own, with a host made of plain functions: the stream's side of a session.

const subscription = { type: "processor" as const, binding: "TEST", host: "h", processor: "p" };
const event = (offset: number): StreamEvent => ({ streamPath: "/s", offset, type: "demo/x", payload: {}, createdAt: new Date(0).toISOString(), source: {} });

function host(release: () => Promise<boolean>) {
  const delivered: number[] = [];
  let wakes = 0;
  const session = (): ProcessorSession => ({
    checkpoint: delivered.at(-1) ?? 0,
    processEventBatch: async (events) => {
      for (const { offset } of events) delivered.push(offset);
      return { offset: events.at(-1)?.offset ?? 0 };
    },
    release,
  });
  return {
    delivered,
    get wakes() {
      return wakes;
    },
    wake: async () => {
      wakes += 1;
      return session();
    },
  };
}

describe("HostedDelivery's release", () => {
  test("a host that never answers an offer to release is dropped after the wait, and the next pump wakes it again", async () => {
    const hung = host(() => new Promise<boolean>(() => undefined));
    const delivery = new HostedDelivery("k", subscription);
    let head = 2;
    const options = { head: () => head, read: (after: number, limit: number) => [event(after + 1), event(after + 2)].filter((e) => e.offset <= head).slice(0, limit), wake: hung.wake, now: () => Date.now() };
    await delivery.pump(options);
    expect(hung.delivered).toEqual([1, 2]);
    const started = Date.now();
    expect(await delivery.release(Date.now(), 0, 50)).toBe("released");
    expect(Date.now() - started).toBeLessThan(2_000);
    // A pump after it is not stalled behind the unanswered release: it wakes the host and goes on.
    head = 3;
    await delivery.pump(options);
    expect(hung.delivered).toEqual([1, 2, 3]);
    expect(hung.wakes).toBe(2);
  });

  test("a host that refuses keeps its session; one that agrees ends it", async () => {
    let agree = false;
    const polite = host(async () => agree);
    const delivery = new HostedDelivery("k", subscription);
    const options = { head: () => 1, read: () => [event(1)], wake: polite.wake, now: () => Date.now() };
    await delivery.pump(options);
    expect(await delivery.release(Date.now(), 0, 50)).toBe("kept");
    agree = true;
    expect(await delivery.release(Date.now(), 0, 50)).toBe("released");
    expect(await delivery.release(Date.now(), 0, 50)).toBe("none");
  });
});
