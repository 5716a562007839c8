import { expect } from "vitest";
import type { Handle } from "iterate/client";
import type { Itx, StreamEvent } from "iterate/types";
import { test } from "../harness/fixtures.ts";

const WOKEN = "events.iterate.com/stream/woken";
const DELIVERED = "events.iterate.com/project/worker-event-delivered";

// On stream/woken the worker marks the start, takes a while (long enough to be cut off), and marks the end.
const WOKEN_WORKER = `import { IterateConfigEntrypoint } from "iterate/sdk";
export default class extends IterateConfigEntrypoint {
  async processEvent(event) {
    if (event.type !== "events.iterate.com/stream/woken") return;
    using itx = this.getItx();
    await itx.append({ type: "test/woken-started", payload: { offset: event.offset, incarnation: event.payload.incarnation } });
    await new Promise((resolve) => setTimeout(resolve, 6000));
    await itx.append({ type: "test/woken-finished", payload: { offset: event.offset } });
  }
  async fetch() { return new Response("ok"); }
}
`;

async function eventsAfter(itx: Handle<Itx>, afterOffset: number, types: string[]): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for (let after = afterOffset; ; ) {
    const page: StreamEvent[] = await itx.getEvents({ afterOffset: after, types, limit: 500 });
    if (page.length === 0) return out;
    out.push(...page);
    after = (page.at(-1) as StreamEvent).offset;
  }
}

const about = (offset: number) => (event: StreamEvent) => (event.payload as { offset?: number }).offset === offset;

test("after an OS restart the project worker receives stream/woken; a restart mid-delivery hands the same woken over again and records no second one", { timeout: 900_000 }, async ({ restartable }) => {
  const slug = `woken-${Date.now().toString(36)}`;
  const created = restartable.session().projects.get(slug);
  expect(await created.create()).toEqual({ created: true });
  const { projectId } = await created.whoami();
  let itx = restartable.project(projectId);
  const before = await itx.streams.get("/").head();
  const { commit } = await itx.repo.commit({ message: "record stream/woken", files: { "worker.ts": WOKEN_WORKER } });
  await itx.waitForEvent({ type: "events.iterate.com/project/worker-updated", afterOffset: before, payload: { commit }, timeoutMs: 240_000 });

  // 1. A clean restart: the first call to the project brings its root up, which records one woken.
  const head1 = await itx.streams.get("/").head();
  await restartable.killAndRestart();
  itx = restartable.project(projectId);
  const first: StreamEvent = await itx.waitForEvent({ type: WOKEN, afterOffset: head1, timeoutMs: 60_000 });
  // The first event of the new incarnation, written by the Stream itself, saying where the stream stood.
  expect(first.source.platform).toBe("stream");
  expect(first.payload).toMatchObject({ previousHead: first.offset - 1, incarnation: expect.any(String) });
  expect((first.payload as { previousHead: number }).previousHead).toBeGreaterThanOrEqual(head1);
  await itx.waitForEvent({ type: "test/woken-finished", afterOffset: first.offset, payload: { offset: first.offset }, timeoutMs: 60_000 });
  const firstDelivered = await itx.waitForEvent({ type: DELIVERED, afterOffset: first.offset, payload: { offset: first.offset }, timeoutMs: 60_000 });
  expect(firstDelivered.payload).toEqual({ offset: first.offset, attempts: 1 });
  // The worker's own calls while it handled the woken (its appends, the feed's fact) woke nothing more.
  const wokenMeanwhile = await eventsAfter(itx, first.offset, [WOKEN]);
  expect(wokenMeanwhile.filter((event) => event.offset < firstDelivered.offset)).toEqual([]);
  const started1 = (await eventsAfter(itx, first.offset, ["test/woken-started"])).filter(about(first.offset));
  expect(started1).toHaveLength(1);
  expect(started1[0]?.payload).toMatchObject({ incarnation: (first.payload as { incarnation: string }).incarnation });

  // 2. A restart while the worker handles a woken: the next incarnation hands that woken over again
  //    (at least once) and records no woken of its own while that one is pending.
  const head2 = await itx.streams.get("/").head();
  await restartable.killAndRestart();
  itx = restartable.project(projectId);
  const second: StreamEvent = await itx.waitForEvent({ type: WOKEN, afterOffset: head2, timeoutMs: 60_000 });
  expect((second.payload as { incarnation: string }).incarnation).not.toBe((first.payload as { incarnation: string }).incarnation);
  await itx.waitForEvent({ type: "test/woken-started", afterOffset: second.offset, payload: { offset: second.offset }, timeoutMs: 60_000 });
  await restartable.killAndRestart();
  itx = restartable.project(projectId);
  const delivered = await itx.waitForEvent({ type: DELIVERED, afterOffset: second.offset, payload: { offset: second.offset }, timeoutMs: 120_000 });
  expect(delivered.payload).not.toHaveProperty("error");
  const markers = await eventsAfter(itx, second.offset, ["test/woken-started", "test/woken-finished"]);
  const started = markers.filter((event) => event.type === "test/woken-started" && about(second.offset)(event));
  const finished = markers.filter((event) => event.type === "test/woken-finished" && about(second.offset)(event));
  // Cut off once, handed over again: not lost.
  expect(started.length).toBeGreaterThanOrEqual(2);
  expect(finished.length).toBeGreaterThanOrEqual(1);
  // Taken off the feed once, and no other woken was recorded while it was pending.
  expect((await eventsAfter(itx, second.offset, [DELIVERED])).filter(about(second.offset))).toHaveLength(1);
  expect((await eventsAfter(itx, second.offset, [WOKEN])).filter((event) => event.offset < delivered.offset)).toEqual([]);
});
