import type { StreamEvent } from "../../types.ts";

// The packed page a Stream answers `getEventsPacked` with: built by SQLite by concatenating the
// stored JSON text, so no payload is parsed twice. Formats 2 and 3 number events from `from`
// (offsets are gapless) and name each type and source once per page; format 3 also says once per
// run what consecutive events share (type, source, commit time). Read by the client (`readEvents`)
// and by the Stream itself (`Journal.read`), both in format 3.

type PackedRow = [offset: number, type: string, payload: unknown, time: number, source: number, idempotencyKey: string | null];

interface PackedPage {
  streamPath: string;
  sources: StreamEvent["source"][];
  times: string[];
  rows: PackedRow[];
}

/** What formats 2 and 3 open with: events numbered from `from` (offsets are gapless), and the names their ids stand for. */
interface NumberedPage {
  streamPath: string;
  /** The offset of the page's first event. */
  from: number;
  types: Record<string, string>;
  sources: Record<string, StreamEvent["source"]>;
}

interface PackedPage2 extends NumberedPage {
  format: 2;
  /** Row i is offset `from + i`. */
  rows: Array<[typeId: number, payload: unknown, sourceId: number, idempotencyKey: string | null, createdAtMs: number]>;
}

interface PackedPage3 extends NumberedPage {
  format: 3;
  /** Idempotency keys by offset. */
  keys: Record<string, string>;
  /** `[offset, typeId, sourceId, createdAtMs]` per run, flattened; a run lasts until the next one's offset. */
  runs: number[];
  /** Payload i is offset `from + i`. */
  payloads: unknown[];
}

/** Turns a `getEventsPacked` page (format 1, 2 or 3) back into events. */
export function unpackEvents(text: string): StreamEvent[] {
  const page = JSON.parse(text) as PackedPage | PackedPage2 | PackedPage3;
  if ("format" in page && page.format === 3) return unpackFormat3(page);
  if ("format" in page && page.format === 2) return unpackFormat2(page);
  const { streamPath, sources, times, rows } = page as PackedPage;
  const events: StreamEvent[] = [];
  for (let i = 0; i < rows.length; i++) {
    const [offset, type, payload, time, source, idempotencyKey] = rows[i] as PackedRow;
    const event: StreamEvent = {
      streamPath,
      offset,
      type,
      payload,
      createdAt: times[time] as string,
      source: copySource(sources[source] as StreamEvent["source"]),
    };
    if (idempotencyKey !== null) event.idempotencyKey = idempotencyKey;
    events.push(event);
  }
  return events;
}

function unpackFormat2({ streamPath, from, types, sources, rows }: PackedPage2): StreamEvent[] {
  const events: StreamEvent[] = [];
  // Events appended together share one time: each distinct one is formatted once.
  let lastAt = Number.NaN;
  let createdAt = "";
  for (let i = 0; i < rows.length; i++) {
    const [typeId, payload, sourceId, idempotencyKey, at] = rows[i] as PackedPage2["rows"][number];
    if (at !== lastAt) {
      lastAt = at;
      createdAt = new Date(at).toISOString();
    }
    const event: StreamEvent = { streamPath, offset: from + i, type: types[typeId] as string, payload, createdAt, source: copySource(sources[sourceId] as StreamEvent["source"]) };
    if (idempotencyKey !== null) event.idempotencyKey = idempotencyKey;
    events.push(event);
  }
  return events;
}

function unpackFormat3({ streamPath, from, types, sources, keys, runs, payloads }: PackedPage3): StreamEvent[] {
  const events: StreamEvent[] = [];
  for (let run = 0; run < runs.length; run += 4) {
    const type = types[runs[run + 1] as number] as string;
    const source = sources[runs[run + 2] as number] as StreamEvent["source"];
    const createdAt = new Date(runs[run + 3] as number).toISOString();
    const end = run + 4 < runs.length ? (runs[run + 4] as number) - from : payloads.length;
    for (let i = (runs[run] as number) - from; i < end; i++) {
      const offset = from + i;
      const event: StreamEvent = { streamPath, offset, type, payload: payloads[i], createdAt, source: copySource(source) };
      const key = keys[offset];
      if (key !== undefined) event.idempotencyKey = key;
      events.push(event);
    }
  }
  return events;
}

// Each event gets its own source (its reaction too): no two events of a page share an object.
function copySource(source: StreamEvent["source"]): StreamEvent["source"] {
  return source.reaction ? { ...source, reaction: { ...source.reaction } } : { ...source };
}
