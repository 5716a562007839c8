import { ItxError } from "iterate/errors";
import { concat } from "../bytes.ts";

export { concat };

/**
 * git's pkt-line framing: four hex digits of length (header included), then the payload;
 * "0000" is a flush, "0001" a delimiter (protocol v2), "0002" a response end.
 */
const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

/** Largest pkt-line git sends or accepts (65516 bytes of payload). */
export const PKT_MAX = 65520;

export const FLUSH = "0000";
export const DELIM = "0001";

/** One pkt-line holding `text` (or bytes): at most PKT_MAX - 4 bytes of them. */
export function pkt(data: string | Uint8Array): Uint8Array {
  const body = typeof data === "string" ? ENCODER.encode(data) : data;
  // git's largest packet: a longer one would need five hex digits, which no reader expects.
  if (body.byteLength > PKT_MAX - 4) throw new Error(`a pkt-line holds at most ${PKT_MAX - 4} bytes, not ${body.byteLength}`);
  const out = new Uint8Array(body.byteLength + 4);
  out.set(ENCODER.encode((body.byteLength + 4).toString(16).padStart(4, "0")));
  out.set(body, 4);
  return out;
}

/** Packet bytes for "0000"/"0001". */
export function control(marker: typeof FLUSH | typeof DELIM): Uint8Array {
  return ENCODER.encode(marker);
}

/** The pack as side-band channel 1 packets, as protocol v2's packfile section carries it. */
export function sideBand(data: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const room = PKT_MAX - 5;
  for (let offset = 0; offset < data.byteLength; offset += room) {
    const chunk = data.subarray(offset, offset + room);
    const line = new Uint8Array(chunk.byteLength + 1);
    line[0] = 1;
    line.set(chunk, 1);
    out.push(pkt(line));
  }
  return out;
}

/**
 * `head`, then the pack as side-band channel 1 packets as it arrives, then a flush. A pack that
 * fails half way ends with a channel 3 packet (git prints it as a fatal error) instead of a cut.
 */
export function sideBandStream(head: Uint8Array, pack: ReadableStream<Uint8Array>, failed: (error: unknown) => string): ReadableStream<Uint8Array> {
  const reader = pack.getReader();
  let started = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!started) {
          started = true;
          controller.enqueue(head);
          return;
        }
        try {
          const { done, value } = await reader.read();
          if (done) {
            controller.enqueue(control(FLUSH));
            controller.close();
            return;
          }
          for (const line of sideBand(value)) controller.enqueue(line);
        } catch (error) {
          controller.enqueue(pkt(concat([Uint8Array.of(3), ENCODER.encode(`${failed(error).slice(0, 1000)}\n`)])));
          controller.close();
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

export type Packet = { kind: "data"; text: string } | { kind: "flush" } | { kind: "delim" };

/**
 * Reads pkt-lines from `body` to its end, or (`stopAfterFlush`) to the first flush, or to
 * `maxPackets` packets. Answers the packets and where the rest (a push's pack) starts. A
 * malformed length is INVALID_ARGUMENT.
 */
export function readPackets(body: Uint8Array, stopAfterFlush = false, maxPackets = Number.POSITIVE_INFINITY): { packets: Packet[]; rest: number } {
  const packets: Packet[] = [];
  let at = 0;
  while (at + 4 <= body.byteLength) {
    if (packets.length >= maxPackets) return { packets, rest: at };
    const hex = DECODER.decode(body.subarray(at, at + 4));
    if (!/^[0-9a-f]{4}$/.test(hex)) throw new ItxError("INVALID_ARGUMENT", "malformed pkt-line");
    const length = Number.parseInt(hex, 16);
    if (length === 0) {
      packets.push({ kind: "flush" });
      at += 4;
      if (stopAfterFlush) return { packets, rest: at };
      continue;
    }
    if (length === 1 || length === 2) {
      packets.push({ kind: "delim" });
      at += 4;
      continue;
    }
    if (length < 4 || at + length > body.byteLength) throw new ItxError("INVALID_ARGUMENT", "malformed pkt-line");
    packets.push({ kind: "data", text: DECODER.decode(body.subarray(at + 4, at + length)).replace(/\n$/, "") });
    at += length;
  }
  if (at !== body.byteLength && !stopAfterFlush) throw new ItxError("INVALID_ARGUMENT", "malformed pkt-line");
  return { packets, rest: at };
}
