import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import { unwrapCoded } from "../api/coded-result.ts";
import { LIMITS } from "../limits.ts";
import { concat, control, DELIM, FLUSH, pkt, readPackets } from "./git-pkt-line.ts";
import { uploadPackV2 } from "./git-service.ts";

// ls-refs checks every ref against every ref-prefix on the Worker's thread: its prefixes are bounded.

async function freshRepo() {
  const stub = env.REPO.getByName(`prj_lsrefs${crypto.randomUUID().replaceAll("-", "")}:/repos/lsrefs`);
  unwrapCoded(await stub.create({ principal: "tester", origin: "/" }));
  return stub;
}

function lsRefs(prefixes: string[]): Uint8Array {
  return concat([pkt("command=ls-refs\n"), control(DELIM), pkt("symrefs\n"), ...prefixes.map((prefix) => pkt(`ref-prefix ${prefix}\n`)), control(FLUSH)]);
}

const lines = (answer: Uint8Array | ReadableStream<Uint8Array>) => readPackets(answer as Uint8Array).packets.flatMap((packet) => (packet.kind === "data" ? [packet.text.trim()] : []));

describe("ls-refs", () => {
  test("GIT_LS_REFS_PREFIXES_MAX: repeated prefixes count once; one distinct prefix past the limit is refused naming it", async () => {
    const stub = await freshRepo();
    unwrapCoded(await stub.commit({ branch: "main", message: "first", files: { "a.txt": "a" } }, { principal: "tester", origin: "/" }));
    // What git sends, and the same prefix many times over: answered.
    expect(lines(await uploadPackV2(stub, lsRefs(["HEAD", "refs/heads/", "refs/tags/"])))).toHaveLength(2);
    expect(lines(await uploadPackV2(stub, lsRefs(Array.from({ length: 5_000 }, () => "refs/heads/"))))).toHaveLength(1);
    const atLimit = Array.from({ length: LIMITS.GIT_LS_REFS_PREFIXES_MAX }, (_, i) => `refs/heads/p${i}`);
    expect(lines(await uploadPackV2(stub, lsRefs([...atLimit.slice(1), "refs/heads/main"])))).toHaveLength(1);
    const refused = await expectCode(uploadPackV2(stub, lsRefs([...atLimit, "refs/heads/main"])), "INVALID_ARGUMENT");
    expect((refused as { details?: { limit?: string } }).details?.limit).toBe("GIT_LS_REFS_PREFIXES_MAX");
  });
});
