// The part of pako 1.0.11 (CommonJS, no types of its own) that pack-inflation.ts uses.
declare module "pako" {
  export class Inflate {
    constructor(options?: { chunkSize?: number });
    push(data: Uint8Array, mode?: boolean | number): boolean;
    onData(chunk: Uint8Array): void;
    onEnd(status: number): void;
    readonly ended: boolean;
    readonly err: number;
    readonly msg: string;
    readonly strm: { avail_in: number };
  }
}
