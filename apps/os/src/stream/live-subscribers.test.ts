import { afterEach, describe, expect, test, vi } from "vitest";
import type { StreamEvent } from "iterate/types";
import { LIMITS } from "../limits.ts";
import { LiveSubscriber, ephemeralBytesQueued } from "./live-subscribers.ts";

// A journal with nothing durable in it: only ephemeral events reach these subscribers, each sent
// at the head (offset 0), as a stream sends them.
const EMPTY_HISTORY = { head: () => 0, read: () => [] };

function ephemeral(text: string): StreamEvent {
  return { offset: 0, type: "demo/tick", payload: { text }, createdAt: new Date().toISOString() } as unknown as StreamEvent;
}

/** A subscriber whose callback takes the first batch and never answers; `failures` counts its stream's failure callbacks. */
function stuckSubscriber(key: string): { subscriber: LiveSubscriber; failures: string[] } {
  const failures: string[] = [];
  const subscriber = new LiveSubscriber({ key, afterOffset: 0, callback: () => new Promise<void>(() => undefined), onFailure: () => void failures.push(key) });
  return { subscriber, failures };
}

describe("LIVE_EPHEMERAL_QUEUED_MAX_BYTES and subscribers whose stream is gone", () => {
  const saved = { ...(LIMITS as Record<string, number>) };
  afterEach(() => {
    vi.restoreAllMocks();
    Object.assign(LIMITS as Record<string, number>, saved);
  });

  test("a subscriber whose stream was dropped (its send far past the deadline its stream enforces) is ended first, before a larger queue that is alive", () => {
    const start = ephemeralBytesQueued();
    Object.assign(LIMITS as Record<string, number>, { LIVE_EPHEMERAL_QUEUED_MAX_BYTES: start + 2_500 });
    const orphan = stuckSubscriber("orphan");
    // Its first event goes out and is never answered; one waits behind it (about 0.6 KB).
    orphan.subscriber.pushEphemeral(ephemeral("o"));
    void orphan.subscriber.pump(EMPTY_HISTORY);
    orphan.subscriber.pushEphemeral(ephemeral("o".repeat(500)));
    // Two deadlines later, with no word from its stream: a stream that still existed would have
    // ended it by its own timer, so its object was dropped (reset, evicted).
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + 2 * LIMITS.LIVE_SUBSCRIBER_CALLBACK_TIMEOUT_MS + 1_000);
    const live = stuckSubscriber("live");
    live.subscriber.pushEphemeral(ephemeral("l"));
    void live.subscriber.pump(EMPTY_HISTORY);
    for (let i = 0; i < 2; i++) live.subscriber.pushEphemeral(ephemeral("l".repeat(500)));
    const liveBytes = live.subscriber.queuedBytes;
    expect(liveBytes).toBeGreaterThan(orphan.subscriber.queuedBytes);
    // This one would go past the bound: the orphan is ended, which makes room; the larger live
    // queue (which a largest-first rule alone would have ended) stays.
    const third = stuckSubscriber("third");
    third.subscriber.pushEphemeral(ephemeral("t".repeat(800)));
    expect(orphan.failures).toEqual(["orphan"]);
    expect(orphan.subscriber.queuedBytes).toBe(0);
    expect(live.failures).toEqual([]);
    expect(live.subscriber.queuedBytes).toBe(liveBytes);
    expect(ephemeralBytesQueued() - start).toBe(liveBytes + third.subscriber.queuedBytes);
    for (const { subscriber } of [live, third, orphan]) subscriber.close();
    expect(ephemeralBytesQueued()).toBe(start);
  });

  test("an event many subscribers of one stream hold is counted once: their backlog does not end other streams' subscribers", () => {
    const start = ephemeralBytesQueued();
    Object.assign(LIMITS as Record<string, number>, { LIVE_EPHEMERAL_QUEUED_MAX_BYTES: start + 10_000 });
    // 50 stuck subscribers of one stream, each holding the same 8 events (about 4.7 KB, once).
    const crowd = Array.from({ length: 50 }, (_, i) => stuckSubscriber(`crowd${i}`));
    for (const { subscriber } of crowd) {
      subscriber.pushEphemeral(ephemeral("c"));
      void subscriber.pump(EMPTY_HISTORY);
    }
    const shared = Array.from({ length: 8 }, () => ephemeral("c".repeat(500)));
    for (const event of shared) for (const { subscriber } of crowd) subscriber.pushEphemeral(event);
    const counted = ephemeralBytesQueued() - start;
    expect(counted).toBeLessThan(6_000);
    expect(counted).toBe(crowd[0]?.subscriber.queuedBytes);
    // Another stream's subscriber with a smaller backlog than each of them keeps its own.
    const other = stuckSubscriber("other");
    other.subscriber.pushEphemeral(ephemeral("x"));
    void other.subscriber.pump(EMPTY_HISTORY);
    for (let i = 0; i < 4; i++) other.subscriber.pushEphemeral(ephemeral("x".repeat(500)));
    expect(other.failures).toEqual([]);
    expect(crowd.flatMap(({ failures }) => failures)).toEqual([]);
    // Past the bound with distinct events, the largest queues end first, and their shared events
    // leave the count only when the last of their holders lets go.
    other.subscriber.pushEphemeral(ephemeral("y".repeat(4_000)));
    expect(crowd.flatMap(({ failures }) => failures)).toHaveLength(50);
    expect(other.failures).toEqual([]);
    expect(other.subscriber.queuedBytes).toBeGreaterThan(6_000);
    expect(ephemeralBytesQueued() - start).toBe(other.subscriber.queuedBytes);
    for (const { subscriber } of [...crowd, other]) subscriber.close();
    expect(ephemeralBytesQueued()).toBe(start);
  });
});
