// The part of pako 1.0.11 (CommonJS, no types of its own) that pack-inflation.ts and packed-objects.ts use.
declare module "pako" {
  export function deflate(data: Uint8Array, options?: { level?: number }): Uint8Array;
  export class Inflate {
    /** `windowBits` 15: zlib streams only (pako otherwise also takes gzip). */
    constructor(options?: { chunkSize?: number; windowBits?: number });
    push(data: Uint8Array, mode?: boolean | number): boolean;
    onData(chunk: Uint8Array): void;
    onEnd(status: number): void;
    readonly ended: boolean;
    readonly err: number;
    readonly msg: string;
    /** The inflated bytes, once the stream ended (when onData is not replaced). */
    readonly result: Uint8Array | undefined;
    readonly strm: { avail_in: number; msg?: string };
  }
}
