import { ItxError, errorCode, errorMessage } from "iterate/errors";
import { unwrapCoded } from "../api/coded-result.ts";
import { relay } from "../api/relay.ts";
import { LIMITS, limitDetails } from "../limits.ts";
import { concat, control, DELIM, FLUSH, pkt, readPackets, sideBandStream, type Packet } from "./git-pkt-line.ts";
import type { PushBody } from "./git-request-body.ts";
import type { RepoDurableObject } from "./repo-durable-object.ts";
import type { PushCommand } from "./repo-pack.ts";
import type { Actor } from "./repo-store.ts";

/**
 * The smart-HTTP conversation, written here (docs/decisions/0010-git-smart-http.md): protocol v2
 * for fetch and clone (`ls-refs`, `fetch`), protocol v0 for push (receive-pack with
 * report-status). Packs are built and indexed by isomorphic-git in the repo's Durable Object.
 */
type RepoStub = DurableObjectStub<RepoDurableObject>;

const ZERO = "0".repeat(40);
const AGENT = "agent=iterate-os";
const OID = /^[0-9a-f]{40}$/;
/** Characters of a refusal git is told (its messages are the OS's own, a path or two at most). */
const REFUSAL_MAX_LENGTH = 1_000;

/** The answer to GET info/refs for `service`. */
export async function advertisement(repo: RepoStub, service: "git-upload-pack" | "git-receive-pack", version2: boolean): Promise<Uint8Array> {
  // Asked even for v2, whose advertisement names no refs: a missing repository is NOT_FOUND here.
  const { refs } = unwrapCoded(await relay(repo.advertise()));
  if (service === "git-upload-pack") {
    if (!version2) throw new ItxError("INVALID_ARGUMENT", "this server speaks git protocol v2 for fetch and clone; use git 2.26 or newer (or set protocol.version=2)");
    return concat([pkt("version 2\n"), pkt(`${AGENT}\n`), pkt("ls-refs=unborn\n"), pkt("fetch\n"), pkt("object-format=sha1\n"), control(FLUSH)]);
  }
  const caps = `report-status delete-refs ofs-delta ${AGENT}`;
  const lines = refs.length === 0 ? [`${ZERO} capabilities^{}\0${caps}\n`] : refs.map(({ ref, oid }, i) => `${oid} ${ref}${i === 0 ? `\0${caps}` : ""}\n`);
  return concat([pkt("# service=git-receive-pack\n"), control(FLUSH), ...lines.map((line) => pkt(line)), control(FLUSH)]);
}

/** POST git-upload-pack (protocol v2): `ls-refs`, or `fetch` (whose pack is streamed). */
export async function uploadPackV2(repo: RepoStub, body: Uint8Array): Promise<Uint8Array | ReadableStream<Uint8Array>> {
  const { packets } = readPackets(body);
  const command = packets[0]?.kind === "data" ? packets[0].text : "";
  const delim = packets.findIndex((packet) => packet.kind === "delim");
  const args = (delim < 0 ? [] : packets.slice(delim + 1)).filter((packet): packet is Extract<Packet, { kind: "data" }> => packet.kind === "data").map((packet) => packet.text);
  if (command === "command=ls-refs") return lsRefs(repo, args);
  if (command === "command=fetch") return fetchPack(repo, args);
  throw new ItxError("INVALID_ARGUMENT", `unknown git command ${JSON.stringify(command.slice(0, 64))}`);
}

async function lsRefs(repo: RepoStub, args: string[]): Promise<Uint8Array> {
  const { defaultBranch, refs } = unwrapCoded(await relay(repo.advertise()));
  const prefixes = [...new Set(args.filter((arg) => arg.startsWith("ref-prefix ")).map((arg) => arg.slice("ref-prefix ".length)))];
  if (prefixes.length > LIMITS.GIT_LS_REFS_PREFIXES_MAX) {
    throw new ItxError("INVALID_ARGUMENT", `ls-refs takes at most ${LIMITS.GIT_LS_REFS_PREFIXES_MAX} distinct ref prefixes, got ${prefixes.length}`, {
      details: limitDetails("GIT_LS_REFS_PREFIXES_MAX"),
    });
  }
  const wanted = (name: string) => prefixes.length === 0 || prefixes.some((prefix) => name.startsWith(prefix));
  const symrefs = args.includes("symrefs");
  const lines: string[] = [];
  const head = refs.find(({ ref }) => ref === `refs/heads/${defaultBranch}`);
  if (wanted("HEAD")) {
    const target = symrefs ? ` symref-target:refs/heads/${defaultBranch}` : "";
    if (head) lines.push(`${head.oid} HEAD${target}`);
    else if (args.includes("unborn")) lines.push(`unborn HEAD${target}`);
  }
  for (const { ref, oid } of refs) if (wanted(ref)) lines.push(`${oid} ${ref}`);
  return concat([...lines.map((line) => pkt(`${line}\n`)), control(FLUSH)]);
}

async function fetchPack(repo: RepoStub, args: string[]): Promise<ReadableStream<Uint8Array>> {
  const wants: string[] = [];
  const haves: string[] = [];
  for (const arg of args) {
    const [word, oid] = arg.split(" ");
    if ((word === "want" || word === "have") && (!oid || !OID.test(oid))) throw new ItxError("INVALID_ARGUMENT", `malformed ${word} line`);
    if (word === "want") wants.push(oid as string);
    if (word === "have") haves.push(oid as string);
  }
  if (wants.length === 0) throw new ItxError("INVALID_ARGUMENT", "fetch without a want");
  const { pack, common } = unwrapCoded(await relay(repo.uploadPack({ wants, haves })));
  const parts: Uint8Array[] = [];
  // Without "done" the client expects acknowledgments first; "ready" says the pack follows now.
  if (!args.includes("done")) {
    parts.push(pkt("acknowledgments\n"));
    if (common.length === 0) parts.push(pkt("NAK\n"));
    for (const oid of common) parts.push(pkt(`ACK ${oid}\n`));
    parts.push(pkt("ready\n"), control(DELIM));
  }
  parts.push(pkt("packfile\n"));
  return sideBandStream(concat(parts), pack, (error) => `the pack could not be written: ${errorMessage(error)}`);
}

/**
 * POST git-receive-pack (protocol v0): ref commands, then the pack; answers report-status. A push
 * refused whole (a coded error: too large, a malformed pack, a limit) is reported as git expects,
 * `unpack <reason>` and every ref `ng`, so `git push` prints why. Commands that cannot be read
 * are INVALID_ARGUMENT.
 */
export async function receivePack(repo: RepoStub, body: Pick<PushBody, "bytes" | "refused">, actor: Actor): Promise<Uint8Array> {
  let read: ReturnType<typeof pushCommands>;
  try {
    read = pushCommands(body.bytes);
  } catch (error) {
    // Commands that cannot be read from an oversized push's head: its size is the refusal to name.
    throw body.refused ?? error;
  }
  const { commands, rest } = read;
  // git probes with an empty request before a large push: nothing to do, nothing to say.
  if (commands.length === 0) {
    if (body.refused) throw body.refused;
    return new Uint8Array(0);
  }
  try {
    if (body.refused) throw body.refused;
    if (commands.length > LIMITS.GIT_HTTP_REF_UPDATES_MAX) {
      throw new ItxError("INVALID_ARGUMENT", `a push updates at most ${LIMITS.GIT_HTTP_REF_UPDATES_MAX} refs`, { details: limitDetails("GIT_HTTP_REF_UPDATES_MAX") });
    }
    const pack = rest < body.bytes.byteLength ? body.bytes.subarray(rest) : null;
    const statuses = unwrapCoded(await relay(repo.receivePack({ commands, pack }, actor)));
    return report("ok", statuses);
  } catch (error) {
    const code = errorCode(error);
    if (code === undefined || code === "NOT_FOUND") throw error;
    const reason = refusal(error);
    return report(reason, commands.map(({ ref }) => ({ ref, error: reason })));
  }
}

/** A push's ref commands (at most one past GIT_HTTP_REF_UPDATES_MAX), and where its pack starts. */
function pushCommands(bytes: Uint8Array): { commands: PushCommand[]; rest: number } {
  // Commands, then a flush: one past the limit (plus the flush) is as many as is worth reading.
  const { packets, rest } = readPackets(bytes, true, LIMITS.GIT_HTTP_REF_UPDATES_MAX + 2);
  const commands: PushCommand[] = [];
  for (const packet of packets) {
    if (packet.kind !== "data") continue;
    // Read no further than one past the limit: that one is refused below, with what came before it.
    if (commands.length > LIMITS.GIT_HTTP_REF_UPDATES_MAX) break;
    const [line] = packet.text.split("\0");
    const [from, to, ref] = (line ?? "").split(" ");
    if (!from || !to || !ref || !OID.test(from) || !OID.test(to)) throw new ItxError("INVALID_ARGUMENT", "malformed push command");
    // Each ref is echoed in the report: bounded, and one line.
    if (ref.length > LIMITS.GIT_REF_NAME_MAX_LENGTH || /\p{Cc}/u.test(ref)) {
      throw new ItxError("INVALID_ARGUMENT", `a pushed ref name is at most ${LIMITS.GIT_REF_NAME_MAX_LENGTH} characters, without control characters`, {
        details: limitDetails("GIT_REF_NAME_MAX_LENGTH"),
      });
    }
    commands.push({ from: from === ZERO ? null : from, to: to === ZERO ? null : to, ref });
  }
  return { commands, rest };
}

/** report-status: the unpack line, then one line per ref. */
function report(unpack: string, statuses: Array<{ ref: string; error?: string }>): Uint8Array {
  const lines = [`unpack ${unpack}\n`, ...statuses.map(({ ref, error }) => (error ? `ng ${ref} ${oneLine(error)}\n` : `ok ${ref}\n`))];
  return concat([...lines.map((line) => pkt(line)), control(FLUSH)]);
}

/** A coded error as one line git prints: `[CODE] message (LIMIT_NAME)`. */
function refusal(error: unknown): string {
  const limit = (error as { details?: { limit?: unknown } }).details?.limit;
  const message = `[${errorCode(error)}] ${errorMessage(error)}`;
  return oneLine(typeof limit === "string" && !message.includes(limit) ? `${message} (${limit})` : message);
}

/** At most REFUSAL_MAX_LENGTH characters, no line breaks: a pkt-line of report-status. */
function oneLine(text: string): string {
  const flat = text.replace(/[\r\n]+/g, " ");
  return flat.length > REFUSAL_MAX_LENGTH ? `${flat.slice(0, REFUSAL_MAX_LENGTH - 1)}…` : flat;
}
