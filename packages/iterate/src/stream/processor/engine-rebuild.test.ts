import { describe, expect, it } from "vitest";
import { z } from "zod";
import { errorCode } from "../../errors/index.ts";
import { checkpointKey } from "./host.ts";
import { defineProcessorContract } from "./contract.ts";
import { ProcessorEngine } from "./engine.ts";
import { StreamProcessor, type ProcessEventArgs, type ReduceArgs } from "./stream-processor.ts";
import { connectEngine, memoryStorage, memoryStream, reduceProcessor, settle } from "../test-support/index.ts";

const NOTED = "test/note-added";

function notesContract(version: string) {
  return defineProcessorContract({
    slug: "notes",
    version,
    description: "keeps notes",
    stateSchema: z.object({ notes: z.array(z.string()).default([]) }),
    events: { [NOTED]: z.strictObject({ text: z.string() }) },
    consumes: [NOTED],
    emits: [],
  });
}

const NotesV1 = notesContract("1.0.0");
const NotesV2 = notesContract("2.0.0");

/** Keeps notes; records the offsets processEvent saw (null for the at-head pass). */
class Notes extends StreamProcessor<typeof NotesV1> {
  readonly contract: typeof NotesV1;
  readonly seen: (number | null)[] = [];
  readonly #shout: boolean;

  constructor(contract = NotesV1, { shout = false } = {}) {
    super();
    this.contract = contract;
    this.#shout = shout;
  }

  override reduce({ event, state }: ReduceArgs<typeof NotesV1>) {
    const text = this.#shout ? event.payload.text.toUpperCase() : event.payload.text;
    return { notes: [...state.notes, text] };
  }

  override processEvent({ event }: ProcessEventArgs<typeof NotesV1>) {
    this.seen.push(event?.offset ?? null);
  }
}

const note = (text: string) => ({ type: NOTED, payload: { text } });

async function runToHead(processor: Notes, stream = memoryStream(), storage = memoryStorage()) {
  const engine = new ProcessorEngine({ stream, storage, processors: [processor] });
  await engine.start();
  return { engine, stream, storage };
}

describe("ProcessorEngine rebuilds", () => {
  it("re-reduces from offset 0 on a version bump without re-running processEvent for what the old version processed", async () => {
    const stream = memoryStream();
    const storage = memoryStorage();
    await stream.append(note("a"), note("b"));
    const v1 = new Notes();
    await runToHead(v1, stream, storage);
    expect(v1.seen).toEqual([1, 2, null]);
    // The old version never saw this one.
    await stream.append(note("c"));

    const v2 = new Notes(NotesV2, { shout: true });
    const { engine } = await runToHead(v2, stream, storage);
    expect(await engine.snapshot("notes")).toEqual({ offset: 3, version: "2.0.0", state: { notes: ["A", "B", "C"] }, skipped: 0 });
    expect(v2.seen).toEqual([3, null]);
  });

  it("rebuilds a deleted checkpoint by replay to the same state, without side effects", async () => {
    const first = new Notes();
    const { engine, stream, storage } = await runToHead(first);
    connectEngine(stream, engine);
    await stream.append(note("x"), note("y"), note("z"));
    await settle(engine);
    const before = await engine.snapshot("notes");

    expect(storage.deleteCheckpoint("notes")).toBe(true);
    const again = new Notes();
    const rebuilt = await runToHead(again, stream, storage);
    expect(await rebuilt.engine.snapshot("notes")).toEqual(before);
    expect(again.seen).toEqual([null]);
    expect(storage.checkpoint("notes")).toMatchObject({ offset: 3, state: before.state });
  });

  it("treats a processor that never committed as new: every event is processed", async () => {
    const stream = memoryStream();
    await stream.append(note("x"), note("y"));
    const fresh = new Notes();
    const { engine } = await runToHead(fresh, stream);
    expect(fresh.seen).toEqual([1, 2, null]);
    expect((await engine.snapshot("notes")).state).toEqual(reduceProcessor(new Notes(), stream.events));
  });

  it("rebuilds when the stored state no longer parses, up to the stored offset", async () => {
    const stream = memoryStream();
    const storage = memoryStorage();
    await stream.append(note("a"), note("b"));
    await runToHead(new Notes(), stream, storage);
    await storage.put(checkpointKey("notes"), { ...storage.checkpoint("notes"), state: { notes: "not a list" } });

    const next = new Notes();
    const { engine } = await runToHead(next, stream, storage);
    expect((await engine.snapshot("notes")).state).toEqual({ notes: ["a", "b"] });
    expect(next.seen).toEqual([null]);
  });

  it("refuses a checkpoint larger than checkpointMaxBytes and commits nothing", async () => {
    const stream = memoryStream();
    const storage = memoryStorage();
    const engine = new ProcessorEngine({ stream, storage, processors: [new Notes()], limits: { checkpointMaxBytes: 400 } });
    await stream.append(note("small"));
    await engine.deliver(stream.events);
    const committed = storage.checkpoint("notes");

    await stream.append(note("x".repeat(400)));
    const [outcome] = await engine.deliver(stream.events);
    expect(outcome).toMatchObject({ slug: "notes", status: "failed", offset: 1 });
    const error = outcome?.status === "failed" ? outcome.error : undefined;
    expect(errorCode(error)).toBe("LIMIT_EXCEEDED");
    expect((error as { details?: unknown }).details).toMatchObject({ limit: "CHECKPOINT_MAX_BYTES", maxBytes: 400, slug: "notes" });
    expect(storage.checkpoint("notes")).toEqual(committed);
    expect(await engine.snapshot("notes")).toMatchObject({ offset: 1, state: { notes: ["small"] } });
  });
});
