import { utf8ByteLength } from "iterate/stream/events";

/**
 * What a keyed table of a processor's state takes in its checkpoint, for bounds checked before a
 * write (MOUNTS_MAX_BYTES, SCHEDULES_MAX_BYTES): each row as its key and its JSON, in UTF-8 bytes.
 */
/** One row's bytes: its key and its JSON (with the quotes, colon and comma around them). */
export function rowBytes(key: string, row: object): number {
  return utf8ByteLength(key) + utf8ByteLength(JSON.stringify(row)) + 4;
}

// A fold replaces its table on every change, so a table's size is counted once.
const tableSizes = new WeakMap<object, number>();

/** The table's bytes, without the row at `replacing` (a write at a held key replaces it). */
export function tableBytes<Row extends object>(table: Record<string, Row>, replacing: string): number {
  let bytes = tableSizes.get(table);
  if (bytes === undefined) {
    bytes = 0;
    for (const [key, row] of Object.entries(table)) bytes += rowBytes(key, row);
    tableSizes.set(table, bytes);
  }
  const replaced = Object.hasOwn(table, replacing) ? table[replacing] : undefined;
  return replaced ? bytes - rowBytes(replacing, replaced) : bytes;
}
