import { readObject } from "isomorphic-git";
import { concat } from "../bytes.ts";
import type { PackedObjects } from "./packed-objects.ts";
import type { ObjectStore } from "./repo-tree.ts";

/**
 * Writes the pack a fetch answers, as a stream: objects are read and sent a few hundred KiB at a
 * time, so a clone of the whole repository never holds more than that and one object in memory
 * (and crosses the Durable Object's RPC boundary, whose single values stop at 32 MiB, as a stream).
 * Objects that sit whole (not as deltas) in a stored pack are copied byte for byte, compressed as
 * they are, the way git's own pack-objects reuses them; only loose objects and deltas are read and
 * compressed again. The trailer is the SHA-1 of everything before it, hashed as it goes.
 */
const TYPES: Record<string, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };

/** Bytes gathered before they are handed on: small objects travel together. */
const PART_BYTES = 262_144;

/** The pack holding `oids`, in that order. */
export function packStream(store: ObjectStore, packs: PackedObjects, oids: string[]): ReadableStream<Uint8Array> {
  const digest = new crypto.DigestStream("SHA-1");
  const hashing = digest.getWriter();
  let next = 0;
  let started = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const parts: Uint8Array[] = [];
        let bytes = 0;
        if (!started) {
          started = true;
          parts.push(packHeader(oids.length));
        }
        while (next < oids.length && bytes < PART_BYTES) {
          const entry = await entryOf(store, packs, oids[next] as string);
          next += 1;
          parts.push(...entry);
          for (const piece of entry) bytes += piece.byteLength;
        }
        const part = concat(parts);
        await hashing.write(part);
        controller.enqueue(part);
        if (next === oids.length) {
          await hashing.close();
          controller.enqueue(new Uint8Array(await digest.digest));
          controller.close();
        }
      },
      async cancel() {
        await hashing.abort();
      },
    },
    { highWaterMark: 0 },
  );
}

/** The pack's first 12 bytes: `PACK`, version 2, the object count. */
function packHeader(count: number): Uint8Array {
  const head = new Uint8Array(12);
  head.set([0x50, 0x41, 0x43, 0x4b]);
  new DataView(head.buffer).setUint32(4, 2);
  new DataView(head.buffer).setUint32(8, count);
  return head;
}

/** One object's entry: copied from a stored pack when it is whole there, otherwise compressed here. */
async function entryOf(store: ObjectStore, packs: PackedObjects, oid: string): Promise<Uint8Array[]> {
  const raw = packs.rawEntry(oid);
  if (raw) return [raw];
  // A delta of a pack is rebuilt by the reader itself; a loose object is read by isomorphic-git.
  const object = packs.read(oid) ?? (await looseObject(store, oid));
  return [entryHeader(TYPES[object.type] ?? 3, object.content.byteLength), await zlib(object.content)];
}

async function looseObject(store: ObjectStore, oid: string): Promise<{ type: string; content: Uint8Array }> {
  const { type, object } = await readObject({ ...store, oid, format: "content" });
  return { type, content: object as Uint8Array };
}

/** A pack entry's header: type and inflated size, git's variable-length encoding. */
function entryHeader(type: number, size: number): Uint8Array {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return new Uint8Array(bytes);
}

/** `data` as a zlib stream, compressed natively. */
export async function zlib(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
