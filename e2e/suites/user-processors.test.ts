import { describe, expect } from "vitest";
import type { RpcStub } from "capnweb";
import type { Itx, StreamEvent, UserProcessorSnapshot } from "iterate/types";
import { test } from "../harness/fixtures.ts";
import { until, type UntilOptions } from "../harness/poll.ts";

const HALTED = "events.iterate.com/itx/subscription-delivery-halted";
const WORKER_UPDATED = "events.iterate.com/project/worker-updated";

/**
 * A config worker exporting three processors: Hoarder keeps `test/blob` payloads prefixed with
 * `tag`, Tally counts every event, and Spinner never returns from a `test/spin` event.
 */
const processorWorker = (tag: string) => `
import { IterateConfigEntrypoint, StreamProcessorDurableObject } from "iterate/sdk";
import { StreamProcessor, defineProcessorContract } from "iterate/stream/processor";

class Hoarder extends StreamProcessor {
  contract = defineProcessorContract({ slug: "hoarder", version: "1.0.0", consumes: ["test/blob"], initialState: () => ({ blobs: [] }) });
  reduce({ event, state }) { return { blobs: [...state.blobs, ${JSON.stringify(tag)} + event.payload.blob] }; }
}
export class HoarderDurableObject extends StreamProcessorDurableObject { processor = new Hoarder(); }

class Tally extends StreamProcessor {
  contract = defineProcessorContract({ slug: "tally", version: "1.0.0", initialState: () => ({ events: 0 }) });
  reduce({ state }) { return { events: state.events + 1 }; }
}
export class TallyDurableObject extends StreamProcessorDurableObject { processor = new Tally(); }

class Spinner extends StreamProcessor {
  contract = defineProcessorContract({ slug: "spinner", version: "1.0.0", consumes: ["test/spin"], initialState: () => ({}) });
  reduce({ state }) { for (;;) {} }
}
export class SpinnerDurableObject extends StreamProcessorDurableObject { processor = new Spinner(); }

export default class extends IterateConfigEntrypoint {
  async fetch() { return new Response("ok"); }
}
`;

/**
 * How this suite polls. A read that reaches the runner while a spinning processor has it replaced
 * may answer UNAVAILABLE or RESOURCE_EXHAUSTED (on a loaded machine the replacement takes a
 * while): those are asked again.
 */
const POLL = { timeoutMs: 60_000, intervalMs: 200, retryOn: ["UNAVAILABLE", "RESOURCE_EXHAUSTED"] } satisfies UntilOptions;

/** The state each processor of `processorWorker` folds. */
interface States {
  hoarder: { blobs: string[] };
  tally: { events: number };
  spinner: Record<string, never>;
}

/** A processor's snapshot, with the state the worker above folds for it (the contract leaves it `unknown`). */
function snapshot<K extends keyof States>(context: RpcStub<Itx>, key: K): () => Promise<UserProcessorSnapshot<States[K]>> {
  return async () => (await context.processor.snapshot(key)) as UserProcessorSnapshot<States[K]>;
}

/** `itx/subscription-delivery-halted`, as far as this suite reads it. */
type Halted = StreamEvent<string, { className: string; failures: number; offset: number; error: { code: string } }>;

/** Commits `worker.ts` to /repos/config and waits until it is the project's worker (a first build takes a while). */
async function commitWorker(itx: RpcStub<Itx>, code: string): Promise<void> {
  const { commit } = await itx.repo.commit({ message: "processors", files: { "worker.ts": code } });
  await itx.waitForEvent({ type: WORKER_UPDATED, payload: { commit }, timeoutMs: 180_000 });
}

const blob = (value: string) => ({ type: "test/blob", payload: { blob: value } });

describe("config-repo processors", () => {
  test("a processor in worker.ts folds the stream it is subscribed to, and the next commit's code takes over", { timeout: 480_000 }, async ({ project: { itx } }) => {
    await commitWorker(itx, processorWorker("v1:"));
    const inbox = itx.cd("/inbox");
    await inbox.append(blob("a"));
    await inbox.processor.subscribe({ key: "hoarder", className: "HoarderDurableObject" });
    await inbox.append(blob("b"), { type: "test/other" }, blob("c"));
    const head = (await inbox.readEvents({ afterOffset: 0, limit: 500 })).events.at(-1)?.offset ?? expect.unreachable("no events on /inbox");
    const folded = await until(snapshot(inbox, "hoarder"), (hoard) => hoard.offset >= head, POLL);
    expect(folded).toMatchObject({ key: "hoarder", className: "HoarderDurableObject", stream: "/inbox", state: { blobs: ["v1:a", "v1:b", "v1:c"] } });

    await commitWorker(itx, processorWorker("v2:"));
    await inbox.append(blob("d"));
    const after = await until(snapshot(inbox, "hoarder"), (hoard) => hoard.state.blobs.length >= 4, POLL);
    expect(after.state.blobs).toEqual(["v1:a", "v1:b", "v1:c", "v2:d"]);
    // A processor the worker does not export is refused when subscribed, not at its first event.
    await expect(inbox.processor.subscribe({ key: "ghost", className: "GhostDurableObject" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  test("a processor that never returns is stopped and halted; the stream, another processor and the OS go on", { timeout: 480_000 }, async ({ project: { itx } }) => {
    await commitWorker(itx, processorWorker(""));
    const spun = itx.cd("/spun");
    await spun.processor.subscribe({ key: "tally", className: "TallyDurableObject" });
    await spun.processor.subscribe({ key: "spinner", className: "SpinnerDurableObject" });
    const [spin = expect.unreachable("the append answered no event")] = await spun.append({ type: "test/spin" });
    // While the spinner's deliveries are stopped and retried, appends, the tally and the OS answer.
    for (let index = 0; index < 5; index++) {
      await spun.append(blob(`x${index}`));
      expect(await itx.whoami()).toMatchObject({ path: "/" });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    const halted = (await spun.waitForEvent({ type: HALTED, payload: { key: "processor:spinner" }, timeoutMs: 240_000 })) as Halted;
    // It halts where its fold stopped: the batch that never returned started there, the spin at or after it.
    expect(halted.payload).toMatchObject({ className: "SpinnerDurableObject", failures: 5 });
    expect(halted.payload.offset).toBeLessThanOrEqual(spin.offset);
    expect(["RESOURCE_EXHAUSTED", "TIMEOUT"]).toContain(halted.payload.error.code);
    const head = (await spun.readEvents({ afterOffset: halted.offset, limit: 500 })).events.at(-1)?.offset ?? halted.offset;
    const tally = await until(snapshot(spun, "tally"), (count) => count.offset >= head, { ...POLL, timeoutMs: 120_000 });
    // The tally folded every event once, the halt included.
    expect(tally.state).toEqual({ events: head });
    const spinner = await until(snapshot(spun, "spinner"), () => true, POLL);
    expect(spinner).toMatchObject({ offset: halted.payload.offset - 1, halted: { offset: halted.payload.offset } });
  });

  test("a processor's state survives an OS restart, and every event is folded once", { timeout: 600_000 }, async ({ restartable }) => {
    const { projectId } = await restartable.session().projects.create({ slug: "uproc-restart" }).whoami();
    let itx = restartable.project(projectId);
    await commitWorker(itx, processorWorker(""));
    await itx.cd("/inbox").processor.subscribe({ key: "hoarder", className: "HoarderDurableObject" });
    await itx.cd("/inbox").append(blob("a"), blob("b"));
    await until(snapshot(itx.cd("/inbox"), "hoarder"), (hoard) => hoard.state.blobs.length === 2, POLL);
    await restartable.kill();
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    await restartable.start();
    itx = restartable.project(projectId);
    const inbox = itx.cd("/inbox");
    expect((await inbox.processor.snapshot("hoarder")).state).toEqual({ blobs: ["a", "b"] });
    await inbox.append(blob("c"));
    const after = await until(snapshot(inbox, "hoarder"), (hoard) => hoard.state.blobs.length >= 3, POLL);
    expect(after.state).toEqual({ blobs: ["a", "b", "c"] });
  });
});
