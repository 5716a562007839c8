import { env } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import { describe, expect, test } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import { unwrapCoded } from "../api/coded-result.ts";
import { LIMITS } from "../limits.ts";
import { concat, control, DELIM, FLUSH, pkt, readPackets } from "./git-pkt-line.ts";
import { receivePack, uploadPackV2 } from "./git-service.ts";

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

const command = (to: string) => pkt(`${"0".repeat(40)} ${to} refs/heads/main\0report-status\n`);

describe("receive-pack", () => {
  const actor = { principal: "tester", origin: "/" };

  test("a push refused whole is reported as git prints it: unpack with the reason, every ref ng", async () => {
    const stub = await freshRepo();
    const refused = new ItxError("INVALID_ARGUMENT", "a push is at most 1 bytes", { details: { limit: "GIT_HTTP_BODY_MAX_BYTES" } });
    const head = concat([command("a".repeat(40)), pkt(`${"0".repeat(40)} ${"b".repeat(40)} refs/heads/dev\n`), control(FLUSH)]);
    expect(lines(await receivePack(stub, { bytes: head, refused }, actor))).toEqual([
      "unpack [INVALID_ARGUMENT] a push is at most 1 bytes (GIT_HTTP_BODY_MAX_BYTES)",
      "ng refs/heads/main [INVALID_ARGUMENT] a push is at most 1 bytes (GIT_HTTP_BODY_MAX_BYTES)",
      "ng refs/heads/dev [INVALID_ARGUMENT] a push is at most 1 bytes (GIT_HTTP_BODY_MAX_BYTES)",
    ]);
    // The repository's own refusal of a pack names the ref it refused, and nothing moved.
    const garbage = concat([command("a".repeat(40)), control(FLUSH), new TextEncoder().encode("PACK not a pack")]);
    expect(lines(await receivePack(stub, { bytes: garbage }, actor))[1]).toMatch(/^ng refs\/heads\/main \[INVALID_ARGUMENT\] the pushed pack could not be read/);
    expect(unwrapCoded(await stub.advertise()).refs).toEqual([]);
  });

  test("GIT_HTTP_REF_UPDATES_MAX and GIT_REF_NAME_MAX_LENGTH bound what a refusal echoes: commands past one too many are not read, a long ref is refused", async () => {
    const stub = await freshRepo();
    // 20,000 commands: one past the limit is read, and the report names those.
    const many = concat([...Array.from({ length: 20_000 }, (_, i) => pkt(`${"0".repeat(40)} ${"a".repeat(40)} refs/heads/b${i}\n`)), control(FLUSH)]);
    const answered = lines(await receivePack(stub, { bytes: many }, actor));
    expect(answered[0]).toBe(`unpack [INVALID_ARGUMENT] a push updates at most ${LIMITS.GIT_HTTP_REF_UPDATES_MAX} refs (GIT_HTTP_REF_UPDATES_MAX)`);
    expect(answered).toHaveLength(LIMITS.GIT_HTTP_REF_UPDATES_MAX + 2);
    // A ref name longer than the limit (or with a control character) is not echoed at all.
    for (const ref of [`refs/heads/${"x".repeat(LIMITS.GIT_REF_NAME_MAX_LENGTH)}`, "refs/heads/a\u0007b"]) {
      const long = concat([pkt(`${"0".repeat(40)} ${"a".repeat(40)} ${ref}\n`), control(FLUSH)]);
      const refused = await expectCode(receivePack(stub, { bytes: long }, actor), "INVALID_ARGUMENT");
      expect((refused as { details?: unknown }).details).toEqual({ limit: "GIT_REF_NAME_MAX_LENGTH" });
    }
    // A refusal of an oversized push whose head cannot be read names the size, not the framing.
    const sized = new ItxError("INVALID_ARGUMENT", "a push is at most 1 bytes", { details: { limit: "GIT_HTTP_BODY_MAX_BYTES" } });
    expect(await expectCode(receivePack(stub, { bytes: new TextEncoder().encode("zzzz"), refused: sized }, actor), "INVALID_ARGUMENT")).toBe(sized);
  });

  test("commands that cannot be read are INVALID_ARGUMENT (an HTTP 400), with or without a refusal", async () => {
    const stub = await freshRepo();
    const malformed = concat([pkt("not a command\n"), control(FLUSH)]);
    await expectCode(receivePack(stub, { bytes: malformed }, actor), "INVALID_ARGUMENT");
    const refused = new ItxError("INVALID_ARGUMENT", "too large");
    await expectCode(receivePack(stub, { bytes: new Uint8Array(8), refused }, actor), "INVALID_ARGUMENT");
    // git's empty probe before a large push: nothing said.
    expect(await receivePack(stub, { bytes: new Uint8Array(0) }, actor)).toHaveLength(0);
  });
});
