import { describe, expect, test } from "vitest";
import { checkProducer, isExpired, type ProtocolMeta } from "./protocol-state.ts";

const tuple = (epoch: number, seq: number) => ({ id: "p", epoch, seq });
const meta = (extra: Partial<ProtocolMeta>): ProtocolMeta => ({ contentType: "text/plain", closed: false, lastAccess: 1_000, createdOverHttp: true, forkRefs: 0, gone: false, ...extra });

describe("idempotent producer fencing", () => {
  test.each([
    ["a new producer starts at 0", undefined, tuple(0, 0), { status: "accepted", epoch: 0, seq: 0 }],
    ["a new producer that skips 0 has a gap", undefined, tuple(0, 3), { status: "sequence-gap", expectedSeq: 0, receivedSeq: 3 }],
    ["the next seq is accepted", { epoch: 1, lastSeq: 4 }, tuple(1, 5), { status: "accepted", epoch: 1, seq: 5 }],
    ["a repeat is a duplicate answering the highest seq", { epoch: 1, lastSeq: 4 }, tuple(1, 2), { status: "duplicate", lastSeq: 4 }],
    ["a skipped seq is a gap", { epoch: 1, lastSeq: 4 }, tuple(1, 7), { status: "sequence-gap", expectedSeq: 5, receivedSeq: 7 }],
    ["an older epoch is fenced", { epoch: 2, lastSeq: 0 }, tuple(1, 9), { status: "stale-epoch", currentEpoch: 2 }],
    ["a newer epoch restarts at 0", { epoch: 2, lastSeq: 9 }, tuple(3, 0), { status: "accepted", epoch: 3, seq: 0 }],
    ["a newer epoch must start at 0", { epoch: 2, lastSeq: 9 }, tuple(3, 1), { status: "invalid-epoch-seq" }],
  ] as const)("%s", (_name, stored, write, expected) => {
    expect(checkProducer(stored, write)).toEqual(expected);
  });
});

describe("expiry", () => {
  test("a TTL slides from the last access; Expires-At is absolute", () => {
    expect(isExpired(meta({ ttlSeconds: 2 }), 2_999)).toBe(false);
    expect(isExpired(meta({ ttlSeconds: 2 }), 3_000)).toBe(true);
    expect(isExpired(meta({ expiresAt: new Date(5_000).toISOString() }), 4_999)).toBe(false);
    expect(isExpired(meta({ expiresAt: new Date(5_000).toISOString() }), 5_000)).toBe(true);
    expect(isExpired(meta({}), Number.MAX_SAFE_INTEGER)).toBe(false);
  });
});
