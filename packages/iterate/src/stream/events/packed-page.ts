import type { StreamEvent } from "../../types.ts";

// The packed page a Stream answers `getEventsPacked` with: built by SQLite by concatenating the
// stored JSON text, so no payload is parsed twice. Format 2 numbers rows from `from` (offsets are
// gapless) and names each type and source once per page. Read by the client (`readEvents`) and by
// the Stream itself (`Journal.read`).

type PackedRow = [offset: number, type: string, payload: unknown, time: number, source: number, idempotencyKey: string | null];

interface PackedPage {
  streamPath: string;
  sources: StreamEvent["source"][];
  times: string[];
  rows: PackedRow[];
}

interface PackedPage2 {
  format: 2;
  streamPath: string;
  /** The offset of the first row; row i is `from + i` (offsets are gapless). */
  from: number;
  types: Record<string, string>;
  sources: Record<string, StreamEvent["source"]>;
  rows: Array<[typeId: number, payload: unknown, sourceId: number, idempotencyKey: string | null, createdAtMs: number]>;
}

/** Turns a `getEventsPacked` page (format 1 or 2) back into events. */
export function unpackEvents(text: string): StreamEvent[] {
  const page = JSON.parse(text) as PackedPage | PackedPage2;
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

// Each event gets its own source (its reaction too): no two events of a page share an object.
function copySource(source: StreamEvent["source"]): StreamEvent["source"] {
  return source.reaction ? { ...source, reaction: { ...source.reaction } } : { ...source };
}
