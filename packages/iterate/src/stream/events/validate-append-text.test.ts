import { expect, it } from "vitest";
import { isDeepStrictEqual } from "node:util";
import { errorCode } from "../../errors/index.ts";
import { STREAM_LIMITS } from "./limits.ts";
import { SERIALIZED_GROWTH_MAX, holdsOnlyPayloadValues, jsonDepth } from "./json-text.ts";
import { validateAppendBatch, validateAppendText } from "./validate-event-input.ts";

/** What a check answers: its value, or its error's code, message, details and class. */
function verdict(run: () => unknown): { ok: unknown } | Record<string, unknown> {
  try {
    return { ok: run() };
  } catch (error) {
    const { message, details } = error as { message: string; details?: unknown };
    return { code: errorCode(error), message, details, name: (error as Error).constructor.name };
  }
}

/** validateAppendText's own test of whether the text proves its payloads (mirrored, to count both sides). */
function provable(text: string): boolean {
  const parsed: unknown = JSON.parse(text);
  const count = Array.isArray(parsed) ? parsed.length : 0;
  const grown = SERIALIZED_GROWTH_MAX * text.length;
  const omitted = ',"payload":{}'.length;
  return (
    jsonDepth(text, STREAM_LIMITS.PAYLOAD_MAX_DEPTH + 2) <= STREAM_LIMITS.PAYLOAD_MAX_DEPTH + 2 &&
    3 * (grown + omitted) <= STREAM_LIMITS.EVENT_MAX_BYTES &&
    3 * (grown + count * omitted) <= STREAM_LIMITS.APPEND_MAX_BYTES &&
    holdsOnlyPayloadValues(text)
  );
}

it("validateAppendText answers what validateAppendBatch answers on the parsed text, over random appends near every bound of the proof", () => {
  let seed = 12_345;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)] as T;
  const nums = ["1e20", "9e20", "1E20", "-1e20", "1e+20", "1e21", "5e-324", "3e-324", "2e-324", "-0", "0", "-0.0", "0e999", "0E+999", "1e308", "1e309", "-1e309", "1e-400", "1.7976931348623157e308", "1.7976931348623159e308", "1.8e308", "1e-7", "1e-6", "0.1", "1e0100", "1e099", "1e+099", `${"9".repeat(99)}`, `${"9".repeat(100)}`, `${"9".repeat(99)}e99`, `${"9".repeat(99)}.${"9".repeat(300)}e209`, `0.${"0".repeat(200)}1e400`, "123456789012345678901", "9007199254740993", "1.5", "-2.5e-10"];
  const strs = ['"a"', '""', '"\\n"', '"\\u0000"', '"\\ud83d\\ude00"', '"\\ud800"', '"\\uDC00"', '"\\\\ud800"', '"\\/"', '"€"', '"😀"', '"\u2028"', '"\ud800"', '"\\"[[[[{"', '"\\u005b"', '"é\\u00e9"', '"\\\\"', '"\\uD7FF"', '"\\uE000"'];
  const keys = ['"k"', '"__proto__"', '"constructor"', '""', '"k"', '"\\u0000"', '"\\ud800"', '"😀"', '"toString"'];
  const ws = () => (random() < 0.1 ? pick([" ", "\n", "\t", "\r\n  "]) : "");
  const value = (depth: number, max: number): string => {
    const r = random();
    if (depth >= max || r < 0.35) return ws() + (random() < 0.5 ? pick(nums) : random() < 0.8 ? pick(strs) : pick(["true", "false", "null"])) + ws();
    const n = random() < 0.7 ? 1 : Math.floor(random() * 3);
    const items = Array.from({ length: n }, () => value(depth + 1, max));
    if (random() < 0.5) return `[${ws()}${items.join(",")}]`;
    return `{${items.map((item) => `${ws()}${pick(keys)}${ws()}:${item}`).join(",")}}`;
  };
  const chain = (levels: number, leaf: string): string => {
    let text = leaf;
    for (let i = 0; i < levels; i++) text = random() < 0.5 ? `[${text}]` : `{${pick(keys)}:${text}}`;
    return text;
  };
  const types = ['"demo/x"', '"demo/y"', '"Bad Type"', '""', "1", '"events.iterate.com/a/b/c"', '"a//b"', '"a/"', `"${"a".repeat(257)}"`]; // invalid on purpose
  const payload = (): string => {
    const r = random();
    if (r < 0.3) return chain(30 + Math.floor(random() * 6), value(0, 1));
    if (r < 0.4) return `"${pick(["x", "€", "😀", "\\u20ac"]).repeat(Math.floor(random() * 20000))}"`;
    if (r < 0.5) return `[${Array.from({ length: Math.floor(random() * 4000) }, () => pick(["1e20", "5e-324", "1e-7", "9e20"])).join(",")}]`;
    return value(0, 6);
  };
  const source = (): string =>
    pick([
      '{"processor":"p"}',
      '{"origin":"o","principal":"pr","platform":"pl"}',
      '{"reaction":{"began":"x#1","round":1}}',
      '{"reaction":{"began":"x#1","round":1e20}}',
      '{"reaction":{"began":"x#1","round":-0}}',
      '{"reaction":{"began":"","round":1}}',
      '{"reaction":{"began":"x","round":1,"extra":1}}',
      '{"reaction":{"began":"x","round":1,"__proto__":1}}',
      '{"reaction":{"began":"\\ud800","round":1}}',
      '{"processor":"\\ud800"}',
      '{"who":"me"}',
      '{"__proto__":"x"}',
      '{"processor":1}',
      "[]",
      "null",
      `{"reaction":{"began":"${"b".repeat(2101)}","round":1}}`,
      `{"reaction":{"began":"${"b".repeat(2100)}","round":1}}`,
      `{"processor":${chain(33, '"x"')}}`,
    ]);
  const input = (): string => {
    if (random() < 0.03) return pick(["1", "null", "[]", '"x"', "{}"]);
    const fields: string[] = [];
    if (random() < 0.97) fields.push(`"type":${pick(types.slice(0, 2).concat(types.slice(0, 2), types.slice(0, 2), types.slice(0, 2), types.slice(0, 2), types))}`);
    if (random() < 0.8) fields.push(`"payload":${payload()}`);
    if (random() < 0.1) fields.push(`"payload":${payload()}`);
    if (random() < 0.15) fields.push(`"idempotencyKey":${pick(['"k"', '""', "1", '"\\ud800"', `"${"k".repeat(512)}"`, `"${"k".repeat(513)}"`, '"😀"'])}`);
    if (random() < 0.15) fields.push(`"ephemeral":${pick(["true", "false", "1", "null"])}`);
    if (random() < 0.15) fields.push(`"source":${source()}`);
    if (random() < 0.005) fields.push(pick(['"colour":"red"', '"__proto__":{}', '"type":"demo/z"', '"payload":null']));
    for (let i = fields.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [fields[i], fields[j]] = [fields[j] as string, fields[i] as string];
    }
    return `{${fields.join(",")}}`;
  };
  // Which side of the proof each text fell on, and its verdict: every combination must be exercised.
  const seen = new Map<string, number>();
  for (let round = 0; round < 800; round++) {
    const n = random() < 0.05 ? Math.floor(random() * 520) : 1 + Math.floor(random() * 2);
    const text = `${ws()}[${Array.from({ length: n }, input).join(",")}]${ws()}`;
    // Longer text is refused before parsing (validateAppendText's first check), whatever it holds.
    if (text.length > STREAM_LIMITS.APPEND_MAX_BYTES) continue;
    const answer = verdict(() => validateAppendText(text));
    const full = verdict(() => validateAppendBatch(JSON.parse(text), { owned: true }));
    // Key order and -0 too: the accepted events are stored as they are.
    expect(isDeepStrictEqual(answer, full) && JSON.stringify(answer) === JSON.stringify(full), text.slice(0, 1000)).toBe(true);
    const side = `${provable(text) ? "proven" : "full"} ${"ok" in answer ? "ok" : "refused"}`;
    seen.set(side, (seen.get(side) ?? 0) + 1);
  }
  for (const side of ["proven ok", "proven refused", "full ok", "full refused"]) expect(seen.get(side) ?? 0, side).toBeGreaterThan(30);
}, 600_000);
