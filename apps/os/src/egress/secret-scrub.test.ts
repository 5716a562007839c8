import { describe, expect, test } from "vitest";
import { ByteScrubber, SCRUB_ENCODED_MIN_BYTES, scrubBytes, scrubHeaders, scrubJsonValue, scrubPatterns, scrubText } from "./secret-scrub.ts";

const MATERIAL = "sk-live-Ab9/+x?&= \"quoted\" \\ é€😀-end";
const ASCII = "sk-live-0123456789abcdef";
const encoder = new TextEncoder();
const patterns = scrubPatterns([MATERIAL, ASCII]);

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function utf16(text: string, littleEndian: boolean): Uint8Array {
  const bytes = new Uint8Array(text.length * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < text.length; i++) view.setUint16(i * 2, text.charCodeAt(i), littleEndian);
  return bytes;
}

function bytesOf(text: string): Uint8Array {
  return encoder.encode(text);
}

function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

// Each row: a body a server could plausibly echo material in, and the material's spelling in it.
// A spelling of null: the material sits inside a longer base64 value, found by decoding.
const ECHO_FORMS: Array<[string, (material: string) => Uint8Array, ((material: string) => Uint8Array) | null]> = [
  ["as written", (m) => bytesOf(`token=${m};`), (m) => bytesOf(m)],
  ["JSON string escapes", (m) => bytesOf(JSON.stringify({ echoed: m })), (m) => bytesOf(JSON.stringify(m).slice(1, -1))],
  ["JSON with \\/ escapes", (m) => bytesOf(`{"echoed":"${JSON.stringify(m).slice(1, -1).replaceAll("/", "\\/")}"}`), (m) => bytesOf(JSON.stringify(m).slice(1, -1).replaceAll("/", "\\/"))],
  [
    "JSON with ASCII-only escapes",
    (m) => bytesOf(`{"echoed":"${JSON.stringify(m).slice(1, -1).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}"}`),
    (m) => bytesOf(JSON.stringify(m).slice(1, -1).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)),
  ],
  ["base64", (m) => bytesOf(`{"b":"${base64(bytesOf(m))}"}`), (m) => bytesOf(base64(bytesOf(m)).replace(/=+$/, "").slice(0, -1))],
  ["base64 inside a longer value (Basic auth)", (m) => bytesOf(`Basic ${base64(bytesOf(`user:${m}`))}`), null],
  ["base64url", (m) => bytesOf(base64(bytesOf(`xy${m}`)).replaceAll("+", "-").replaceAll("/", "_")), null],
  ["base64 at the third alignment", (m) => bytesOf(base64(bytesOf(`x${m}yz`))), null],
  ["percent-encoding", (m) => bytesOf(`/cb?code=${encodeURIComponent(m)}`), (m) => bytesOf(encodeURIComponent(m))],
  ["percent-encoding, lower-case hex", (m) => bytesOf(encodeURIComponent(m).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())), (m) => bytesOf(encodeURIComponent(m).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()))],
  ["form encoding", (m) => bytesOf(`a=1&k=${encodeURIComponent(m).replaceAll("%20", "+")}`), (m) => bytesOf(encodeURIComponent(m).replaceAll("%20", "+"))],
  ["UTF-16LE", (m) => concatBytes(new Uint8Array([0xff, 0xfe]), utf16(`key: ${m}`, true)), (m) => utf16(m, true)],
  ["UTF-16BE", (m) => concatBytes(new Uint8Array([0xfe, 0xff]), utf16(`key: ${m}`, false)), (m) => utf16(m, false)],
];

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function decodedBase64Contains(body: Uint8Array, material: string): boolean {
  const text = new TextDecoder().decode(body);
  const latin1 = Array.from(bytesOf(material), (byte) => String.fromCharCode(byte)).join("");
  for (const token of text.match(/[A-Za-z0-9+/_-]{8,}={0,2}/g) ?? []) {
    try {
      const decoded = atob(token.replaceAll("-", "+").replaceAll("_", "/").replace(/=+$/, "").padEnd(Math.ceil(token.replace(/=+$/, "").length / 4) * 4, "="));
      if (decoded.includes(latin1)) return true;
    } catch {
      // not base64
    }
  }
  return false;
}

/** `text` as UTF-8. */
function letters(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** The scrub as a byte-by-byte reference: leftmost first, the first pattern in order at a position. */
function naive(body: Uint8Array, list: Array<{ bytes: Uint8Array; replacement: Uint8Array }>): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < body.length; ) {
    const match = list.find(({ bytes }) => i + bytes.length <= body.length && bytes.every((byte, j) => body[i + j] === byte));
    if (match) {
      out.push(...match.replacement);
      i += match.bytes.length;
    } else out.push(body[i++] as number);
  }
  return new Uint8Array(out);
}

/** The i-th letter of the Thue-Morse sequence: the parity of i's one bits. */
function thueMorse(i: number): number {
  let parity = 0;
  for (let n = i; n > 0; n >>= 1) parity ^= n & 1;
  return parity;
}

describe("the secret scrub", () => {
  for (const material of [MATERIAL, ASCII]) {
    test.each(ECHO_FORMS)(`finds material echoed %s (${material === ASCII ? "ASCII" : "mixed"} material)`, (_form, echo, spelling) => {
      const body = echo(material);
      const present = (bytes: Uint8Array) => (spelling ? contains(bytes, spelling(material)) : decodedBase64Contains(bytes, material));
      expect(present(body)).toBe(true);
      const scrubbed = scrubBytes(body, patterns);
      expect(present(scrubbed)).toBe(false);
      expect(contains(scrubbed, bytesOf(material))).toBe(false);
      expect(decodedBase64Contains(scrubbed, material)).toBe(false);
      expect(scrubbed.length).toBeGreaterThan(0);
    });
  }

  test("replacement keeps the charset: UTF-16 text still decodes, with [secret] in place", () => {
    const le = scrubBytes(utf16(`a ${ASCII} b`, true), patterns);
    expect(new TextDecoder("utf-16le").decode(le)).toBe("a [secret] b");
    const be = scrubBytes(utf16(`a ${ASCII} b`, false), patterns);
    expect(new TextDecoder("utf-16be").decode(be)).toBe("a [secret] b");
    expect(new TextDecoder().decode(scrubBytes(bytesOf(JSON.stringify({ k: MATERIAL })), patterns))).toBe('{"k":"[secret]"}');
  });

  test("text without material passes unchanged, byte for byte", () => {
    const body = bytesOf(`nothing here: sk-live- 0123456789 ${"x".repeat(1000)} é😀`);
    expect(scrubBytes(body, patterns)).toEqual(body);
    const binary = crypto.getRandomValues(new Uint8Array(4096));
    const clean = scrubBytes(binary, scrubPatterns([ASCII]));
    expect(clean.length).toBe(binary.length);
  });

  test("a material split across chunks at any byte is still found; chunks hold back only what they must", () => {
    for (const [, echo] of ECHO_FORMS) {
      const body = echo(ASCII);
      const whole = scrubBytes(body, patterns);
      for (let cut = 0; cut <= body.length; cut++) {
        const scrubber = new ByteScrubber(patterns);
        const out = concatBytes(concatBytes(scrubber.push(body.subarray(0, cut)), scrubber.push(body.subarray(cut))), scrubber.flush());
        expect(out).toEqual(whole);
      }
      const oneByOne = new ByteScrubber(patterns);
      const parts: Uint8Array[] = [];
      for (const byte of body) parts.push(oneByOne.push(new Uint8Array([byte])));
      parts.push(oneByOne.flush());
      expect(parts.reduce(concatBytes, new Uint8Array(0))).toEqual(whole);
    }
    const longest = Math.max(...patterns.map((pattern) => pattern.bytes.length));
    const streaming = new ByteScrubber(patterns);
    const released = streaming.push(new Uint8Array(100_000).fill(0x61));
    expect(released.length).toBe(100_000 - (longest - 1));
  });

  test("the rolling-hash scan finds what a byte-by-byte scan finds: leftmost first, the first pattern in order at a position, whole or in chunks", () => {
    // Patterns over a two-letter alphabet overlap and nest everywhere: the hard cases for a hashed search.
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
    const word = (length: number) => Array.from({ length }, () => (next() < 0.7 ? "a" : "b")).join("");
    for (let round = 0; round < 60; round++) {
      const list = Array.from({ length: 1 + Math.floor(next() * 5) }, (_, i) => ({ bytes: letters(word(1 + Math.floor(next() * 12))), replacement: letters(`<${i}>`) }));
      const body = letters(word(Math.floor(next() * 400)));
      const expected = naive(body, list);
      expect(scrubBytes(body, list), `round ${round}`).toEqual(expected);
      const scrubber = new ByteScrubber(list);
      const parts: Uint8Array[] = [];
      for (let at = 0; at < body.length; at += 37) parts.push(scrubber.push(body.subarray(at, at + 37)));
      parts.push(scrubber.flush());
      expect(parts.reduce(concatBytes, new Uint8Array(0)), `round ${round} in chunks`).toEqual(expected);
    }
  });

  test("a long material of one letter, answered as that letter with one other between: scrubbed in one pass over the bytes", () => {
    // A secret a project may set (printable ASCII within SECRET_MATERIAL_MAX_LENGTH), echoed so a
    // byte-by-byte compare ran nearly the whole material at every position (seconds per chunk).
    const material = "a".repeat(16_384);
    const body = new TextEncoder().encode(`${"a".repeat(16_383)}b`.repeat(16) + material + "tail");
    const out = new TextDecoder().decode(scrubBytes(body, scrubPatterns([material])));
    expect(out.endsWith("[secret]tail")).toBe(true);
    expect(out.length).toBe(16 * 16_384 + "[secret]tail".length);
  });

  test("a stream of tiny chunks behind a long hold-back hashes each byte once and scrubs as a whole body does", () => {
    // 16 KiB of material spelled with every byte percent-encoded holds back 48 KiB: hashing the
    // held bytes again on every push made a server answering a byte at a time cost that per byte.
    const material = "k".repeat(16_384);
    const list = scrubPatterns([material]);
    const longest = Math.max(...list.map((pattern) => pattern.bytes.length));
    expect(longest).toBeGreaterThan(48_000);
    const body = new TextEncoder().encode(`head ${"k".repeat(16_383)} ${encodeURIComponent(material)} ${"%6B".repeat(16_383)} tail`);
    const whole = scrubBytes(body, list);
    expect(new TextDecoder().decode(whole)).toBe(`head ${"k".repeat(16_383)} [secret] ${"%6B".repeat(16_383)} tail`);
    const scrubber = new ByteScrubber(list);
    const parts: Uint8Array[] = [];
    let seed = 11;
    for (let at = 0; at < body.length; ) {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      // Mostly one to three bytes, now and then a chunk longer than the buffer's room.
      const size = seed % 97 === 0 ? 70_000 : 1 + (seed % 3);
      parts.push(scrubber.push(body.subarray(at, at + size)));
      at += size;
    }
    parts.push(scrubber.flush());
    expect(parts.reduce(concatBytes, new Uint8Array(0))).toEqual(whole);
    expect(scrubber.hashedBytes).toBe(body.length);
  });

  test("what a push answers is the caller's own: taking its buffer does not disturb the scrubber", () => {
    const scrubber = new ByteScrubber(patterns);
    const first = scrubber.push(bytesOf(`${"x".repeat(5_000)} ${ASCII.slice(0, 5)}`));
    structuredClone(first.buffer, { transfer: [first.buffer] });
    const rest = concatBytes(scrubber.push(bytesOf(`${ASCII.slice(5)} after`)), scrubber.flush());
    expect(new TextDecoder().decode(rest)).toMatch(/\[secret\] after$/);
  });

  test("a material whose tail is a Thue-Morse string (it collides with x^128 under any polynomial hash modulo 2^32) is told apart from a body of x", () => {
    const material = "x".repeat(2_048 - 128) + Array.from({ length: 128 }, (_, i) => (thueMorse(i) ? "y" : "w")).join("");
    const body = new TextEncoder().encode(`${"x".repeat(8_192)}${material}`);
    const out = new TextDecoder().decode(scrubBytes(body, scrubPatterns([material])));
    expect(out).toBe(`${"x".repeat(8_192)}[secret]`);
  });

  test("headers are scrubbed, each set-cookie on its own", () => {
    const headers = new Headers([
      ["x-echo", `Bearer ${ASCII}`],
      ["location", `https://example.com/cb?k=${encodeURIComponent(MATERIAL)}`],
      ["set-cookie", `session=${ASCII}; Path=/`],
      ["set-cookie", `b64=${base64(bytesOf(ASCII))}; HttpOnly`],
      ["content-type", "text/plain"],
    ]);
    const clean = scrubHeaders(headers, patterns);
    expect(clean.get("x-echo")).toBe("Bearer [secret]");
    expect(clean.get("location")).toBe("https://example.com/cb?k=[secret]");
    const cookies = clean.getSetCookie();
    expect(cookies).toHaveLength(2);
    expect(cookies[0]).toBe("session=[secret]; Path=/");
    expect(cookies.join("\n")).not.toContain(base64(bytesOf(ASCII)).slice(0, 20));
    expect(clean.get("content-type")).toBe("text/plain");
  });

  test("a header whose name spells material is dropped, whatever its case (a name cannot hold [secret])", () => {
    const token = "sk_live_0123456789ABCDEFghij";
    const tokenPatterns = scrubPatterns([token]);
    const headers = new Headers([
      [`x-${token}`, "1"],
      [`X-Echo-${token.toUpperCase()}-Seen`, "1"],
      [`x-${encodeURIComponent(token)}`, "1"],
      ["x-other", "kept"],
    ]);
    const clean = scrubHeaders(headers, tokenPatterns);
    expect([...clean.keys()]).toEqual(["x-other"]);
    expect(clean.get("x-other")).toBe("kept");
  });

  test("a JSON value is scrubbed in strings and keys; other values and lone surrogates are left alone", () => {
    const value = { [ASCII]: [`x ${ASCII} y`, 1, true, null, { deep: base64(bytesOf(ASCII)) }], lone: "\ud800 ok" };
    const { value: clean, scrubbed } = scrubJsonValue(value, patterns);
    expect(scrubbed).toBe(true);
    expect(JSON.stringify(clean)).not.toContain(ASCII);
    expect(clean).toEqual({ "[secret]": ["x [secret] y", 1, true, null, { deep: expect.stringContaining("[secret]") }], lone: "\ud800 ok" });
    expect(scrubJsonValue({ lone: "\udfff" }, patterns)).toEqual({ value: { lone: "\udfff" }, scrubbed: false });
    expect(scrubText("plain", [])).toBe("plain");
  });

  test("short materials are scrubbed as written only: their encoded forms would match ordinary text", () => {
    const short = scrubPatterns(["abc"]);
    expect(short.every((pattern) => pattern.bytes.length === 3 || pattern.bytes.length >= SCRUB_ENCODED_MIN_BYTES)).toBe(true);
    expect(new TextDecoder().decode(scrubBytes(bytesOf("xabcx"), short))).toBe("x[secret]x");
  });
});
