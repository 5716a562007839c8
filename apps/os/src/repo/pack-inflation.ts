import { Inflate } from "pako";
import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";
import type { ThreadShare } from "../limits/thread-share.ts";

/**
 * What one object costs a pass beyond its bytes (an inflater, a row of the index), counted as
 * bytes of work for ThreadShare: a pack of many tiny objects gives the thread up as well.
 */
export const PACK_OBJECT_WORK_BYTES = 16_384;

/**
 * Walks a pushed pack before it is indexed: finds where each entry starts, checks its framing
 * (header, version, every declared object present, nothing after the last, the SHA-1 trailer),
 * and refuses one that would inflate past GIT_PUSH_INFLATED_MAX_BYTES. Inflating runs in
 * JavaScript on the Durable Object's thread (locally the one thread of the whole OS): 256 KiB of
 * deflated zeros can stand for gigabytes. Here each object stops inflating as soon as it passes
 * the size it declared, and the pack stops as soon as the sum passes the limit; a delta counts its
 * data and the object it rebuilds (which indexing materializes). An object larger than
 * REPO_FILE_MAX_BYTES is refused from its header, before any of it is inflated, and a pack of
 * more than GIT_PUSH_OBJECTS_MAX objects from its own header. Only counts and offsets are kept.
 * With `share`, the thread is given up between objects.
 */
export async function checkPackInflation(pack: Uint8Array, share?: ThreadShare): Promise<PackInflation> {
  const view = new DataView(pack.buffer, pack.byteOffset, pack.byteLength);
  if (pack.byteLength < 12 || view.getUint32(0) !== 0x5041434b) throw malformed("it does not start with a pack header");
  if (view.getUint32(4) !== 2) throw malformed(`it is pack version ${view.getUint32(4)}, not 2`);
  const objects = view.getUint32(8);
  if (objects > LIMITS.GIT_PUSH_OBJECTS_MAX) {
    throw new ItxError("INVALID_ARGUMENT", `a pushed pack holds ${objects} objects, more than ${LIMITS.GIT_PUSH_OBJECTS_MAX}; push in parts`, {
      details: limitDetails("GIT_PUSH_OBJECTS_MAX"),
    });
  }
  if (pack.byteLength < 12 + 20) throw malformed("it is cut short");
  let at = 12;
  let total = 0;
  const count = (bytes: number) => {
    total += bytes;
    if (total > LIMITS.GIT_PUSH_INFLATED_MAX_BYTES) {
      throw new ItxError("INVALID_ARGUMENT", `a pushed pack inflates to more than ${LIMITS.GIT_PUSH_INFLATED_MAX_BYTES} bytes; push in parts`, {
        details: limitDetails("GIT_PUSH_INFLATED_MAX_BYTES"),
      });
    }
  };
  const entries: number[] = [];
  const end = pack.byteLength - 20;
  for (let read = 0; read < objects; read += 1) {
    if (at >= end) throw malformed(`it ends after ${read} of the ${objects} objects it declares`);
    entries.push(at);
    // The header: type in bits 6-4 of the first byte, the size as a little-endian varint.
    let byte = pack[at++] ?? 0;
    const type = (byte >> 4) & 7;
    let size = byte & 15;
    for (let scale = 16; byte & 0x80; scale *= 128) {
      byte = pack[at++] ?? 0;
      size += (byte & 0x7f) * scale;
    }
    if (type === 6) at = pastVarint(pack, at); // the base's offset
    if (type === 7) at += 20; // the base's id
    if (type !== 6 && type !== 7) checkObjectSize(size);
    count(size);
    const head: number[] = [];
    let inflated = 0;
    // An output chunk no larger than the object needs: a pack of many small objects allocates little.
    // zlib only (windowBits 15): pako would also take gzip, which git cannot read once it is copied into a clone.
    const inflator = new Inflate({ chunkSize: Math.min(65_536, Math.max(1_024, size + 1)), windowBits: 15 });
    inflator.onData = (chunk) => {
      inflated += chunk.byteLength;
      if (inflated > size) throw malformed("an object inflates past the size it declares");
      for (let i = 0; head.length < 20 && i < chunk.byteLength; i += 1) head.push(chunk[i] ?? 0);
    };
    // Replacing onEnd keeps pako from recording an error itself: its status is kept here.
    let status = 0;
    inflator.onEnd = (code) => {
      status = code;
    };
    inflator.push(pack.subarray(at, end), false);
    if (status !== 0 || inflator.err || !inflator.ended) throw malformed(`object ${read} at byte ${entries.at(-1)} does not inflate (${inflator.strm.msg || inflator.msg || "cut short"})`);
    at = end - inflator.strm.avail_in;
    // A delta starts with two varints, the base's size and the size of the object it rebuilds.
    if (type === 6 || type === 7) {
      const rebuilt = deltaResultSize(head);
      checkObjectSize(rebuilt);
      count(rebuilt);
    }
    await share?.did(inflated + PACK_OBJECT_WORK_BYTES);
  }
  if (at !== end) throw malformed(`${end - at} bytes follow its last object`);
  const trailer = new Uint8Array(await crypto.subtle.digest("SHA-1", pack.subarray(0, end)));
  if (trailer.some((byte, i) => byte !== pack[end + i])) throw malformed("its trailer is not the SHA-1 of its contents");
  return { inflated: total, entries };
}

/**
 * What the walk found: the bytes the pack's objects inflate to (each within REPO_FILE_MAX_BYTES, a
 * delta by the object it rebuilds) and where each entry starts, in pack order.
 */
export interface PackInflation {
  inflated: number;
  entries: number[];
}

/** The index just past the varint that starts at `at`. */
function pastVarint(bytes: ArrayLike<number>, at: number): number {
  let next = at;
  for (let byte = 0x80; byte & 0x80; next += 1) byte = bytes[next] ?? 0;
  return next;
}

function deltaResultSize(head: number[]): number {
  let at = pastVarint(head, 0);
  let size = 0;
  for (let scale = 1; ; scale *= 128) {
    const byte = head[at++] ?? 0;
    size += (byte & 0x7f) * scale;
    if (!(byte & 0x80)) return size;
  }
}

// No object of a repository is larger than a file may be (checkFileSize refuses such a blob after
// indexing; trees and commits are far smaller): refused before it is inflated at all.
function checkObjectSize(size: number): void {
  if (size > LIMITS.REPO_FILE_MAX_BYTES) {
    throw new ItxError("INVALID_ARGUMENT", `a pushed object has ${size} bytes, more than ${LIMITS.REPO_FILE_MAX_BYTES}; nothing was written`, {
      details: limitDetails("REPO_FILE_MAX_BYTES"),
    });
  }
}

/** A pack that is not one as git writes it: the push's fault. */
function malformed(why: string): ItxError {
  return new ItxError("INVALID_ARGUMENT", `the pushed pack could not be read: ${why}`);
}
