// The scrub: the safety net behind the allowlist. A remote that the allowlist let material reach
// may echo it back (a debugging endpoint, an error page that quotes the request, a cookie). The
// pipe replaces every spelling of the material it knows a server plausibly uses, in the answer's
// headers and in its body's bytes, whatever the content type or charset. It cannot catch a server
// that transforms material any other way (hashing, reversing, splitting, encrypting, double
// encoding): the allowlist decides who may see material at all; the scrub only narrows the echo.

/** What a scrubbed spelling of material becomes (in the charset of the spelling it replaced). */
export const SCRUB_REPLACEMENT = "[secret]";

/**
 * Shortest encoded spelling scrubbed. Material is always scrubbed as written; its encoded forms
 * only from this many bytes on, or a base64 fragment of a 4-byte material would match ordinary text.
 */
export const SCRUB_ENCODED_MIN_BYTES = 8;

/** One byte sequence to find, and the bytes that replace it. */
export interface ScrubPattern {
  bytes: Uint8Array;
  replacement: Uint8Array;
}

const encoder = new TextEncoder();
const NAME_DECODER = new TextDecoder();
const REPLACEMENT_UTF8 = encoder.encode(SCRUB_REPLACEMENT);
const REPLACEMENT_UTF16LE = utf16(SCRUB_REPLACEMENT, true);
const REPLACEMENT_UTF16BE = utf16(SCRUB_REPLACEMENT, false);

/**
 * Every spelling of each material the scrub looks for: as written (UTF-8), JSON string escapes
 * (plain, `\/`, and `\uXXXX` for non-ASCII in either case), percent-encoding (upper and lower hex,
 * `+` for space, encodeURI's lighter form, and every byte encoded), base64 standard and url-safe
 * at each of the three byte alignments (so material inside a longer encoded value is found too),
 * and UTF-16 LE and BE.
 */
export function scrubPatterns(materials: readonly string[]): ScrubPattern[] {
  const patterns = new Map<string, ScrubPattern>();
  const add = (bytes: Uint8Array, replacement: Uint8Array, always = false) => {
    if (bytes.length === 0 || (!always && bytes.length < SCRUB_ENCODED_MIN_BYTES)) return;
    const key = Array.from(bytes).join(",");
    if (!patterns.has(key)) patterns.set(key, { bytes, replacement });
  };
  for (const material of materials) {
    if (material.length === 0) continue;
    const utf8 = encoder.encode(material);
    add(utf8, REPLACEMENT_UTF8, true);
    for (const text of textSpellings(material)) add(encoder.encode(text), REPLACEMENT_UTF8);
    for (const text of base64Spellings(utf8)) add(encoder.encode(text), REPLACEMENT_UTF8);
    add(utf16(material, true), REPLACEMENT_UTF16LE);
    add(utf16(material, false), REPLACEMENT_UTF16BE);
  }
  // Longest first: where two spellings start at the same byte, the longer one is replaced.
  return [...patterns.values()].toSorted((a, b) => b.bytes.length - a.bytes.length);
}

function textSpellings(material: string): string[] {
  const json = JSON.stringify(material).slice(1, -1);
  const asciiJson = json.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
  // encodeURI* throw on a lone surrogate; an encoder would have written U+FFFD for it.
  const wellFormed = material.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
  const component = encodeURIComponent(wellFormed);
  const everyByte = Array.from(encoder.encode(material), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("");
  return [
    json,
    json.replaceAll("/", "\\/"),
    asciiJson,
    asciiJson.replace(/\\u([0-9a-f]{4})/g, (_match, hex: string) => `\\u${hex.toUpperCase()}`),
    asciiJson.replaceAll("/", "\\/"),
    component,
    component.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    component.replaceAll("%20", "+"),
    component.replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`),
    encodeURI(wellFormed),
    everyByte,
    everyByte.toLowerCase(),
  ];
}

// The base64 characters that depend on the material's bytes alone, at each alignment of the
// material within a longer encoded value; standard and url-safe alphabets.
function base64Spellings(bytes: Uint8Array): string[] {
  const spellings: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = new Uint8Array(offset + bytes.length + 2);
    padded.set(bytes, offset);
    let binary = "";
    for (const byte of padded) binary += String.fromCharCode(byte);
    const encoded = btoa(binary);
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    const core = encoded.slice(first, end);
    spellings.push(core, core.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return spellings;
}

function utf16(text: string, littleEndian: boolean): Uint8Array {
  const bytes = new Uint8Array(text.length * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < text.length; i++) view.setUint16(i * 2, text.charCodeAt(i), littleEndian);
  return bytes;
}

/**
 * Scrubs a byte stream chunk by chunk. Each chunk is answered at once except its last
 * (longest pattern − 1) bytes, which could begin a spelling that the next chunk completes.
 *
 * Where a position's first byte starts a pattern, the window's hash (cut from the prefix hashes)
 * is compared before its bytes, so bytes are compared only where a spelling very likely is: the
 * work is linear in the bytes and the candidates, whatever the bytes are. Comparing byte by byte
 * at every such position cost the bytes times the patterns' lengths: a project that set its own
 * secret to 16 KiB of one letter, and answered that letter back, held the OS's thread seconds per
 * chunk.
 *
 * The held bytes and their prefix hashes stay in a buffer with room after them, so a push hashes
 * and copies only its own chunk; the held bytes move only when the room runs out, after at least
 * the hold-back's length of new bytes. Joining and rehashing them on every push cost the
 * hold-back (up to 3 x SECRET_MATERIAL_MAX_LENGTH) per chunk, however small: a server answering
 * a byte at a time made each byte cost that much.
 */
export class ByteScrubber {
  readonly #index: PatternIndex;
  // The bytes not yet answered are #bytes[#start, #end). #prefix[k] hashes every byte this buffer
  // received before k, from wherever it began: a window's hash, prefix[end] − prefix[at]·b^length,
  // does not depend on where that was.
  #bytes = new Uint8Array(0);
  #prefix = new Int32Array(1);
  #start = 0;
  #end = 0;
  #hashed = 0;

  constructor(patterns: readonly ScrubPattern[]) {
    this.#index = indexOf(patterns);
  }

  /** Bytes hashed so far: each pushed byte once, however the stream is cut into chunks. */
  get hashedBytes(): number {
    return this.#hashed;
  }

  /** The scrubbed bytes that can be released now. */
  push(chunk: Uint8Array): Uint8Array {
    this.#take(chunk);
    const out = this.#scan(Math.max(this.#start, this.#end - this.#index.holdBack));
    // A big chunk made a big buffer: what is held now is at most the hold-back, so it moves to one
    // sized for the stream's usual pushes rather than keeping five times the big one's size.
    const usual = this.#end - this.#start + this.#index.holdBack + SCRUB_ROOM_BYTES;
    if (this.#bytes.length > 4 * usual) this.#move(usual);
    return out;
  }

  /**
   * The bytes held back and not yet searched, handed over (and forgotten here) so that a scrubber
   * with more patterns can search them: pushed into it, they are searched as if never held.
   */
  takeHeld(): Uint8Array {
    const held = this.#bytes.subarray(this.#start, this.#end);
    this.#reset();
    return held;
  }

  /** The rest, at the end of the stream. */
  flush(): Uint8Array {
    const out = this.#scan(this.#end);
    this.#reset();
    return out;
  }

  #reset(): void {
    this.#bytes = new Uint8Array(0);
    this.#prefix = new Int32Array(1);
    this.#start = 0;
    this.#end = 0;
  }

  // Appends `chunk` after the held bytes and hashes it. Without room, the held bytes move to a new
  // buffer sized for them, the chunk and as much again as the hold-back (so the next move is at
  // least that many bytes away). The first push takes only what it needs: most scrubs are one
  // value pushed once (a header, each string of a result), and room for them cost more than the scan.
  #take(chunk: Uint8Array): void {
    if (this.#end + chunk.length > this.#bytes.length) {
      const room = this.#bytes.length === 0 ? 0 : this.#index.holdBack + SCRUB_ROOM_BYTES;
      this.#move(this.#end - this.#start + chunk.length + room);
    }
    const bytes = this.#bytes;
    const prefix = this.#prefix;
    const b = this.#index.base;
    const from = this.#end;
    const to = from + chunk.length;
    bytes.set(chunk, from);
    for (let j = from; j < to; j++) prefix[j + 1] = reduce((prefix[j] as number) * b + (bytes[j] as number));
    this.#end = to;
    this.#hashed += chunk.length;
  }

  // Moves the held bytes and their prefix hashes to the start of a new buffer of `capacity` bytes.
  #move(capacity: number): void {
    const held = this.#end - this.#start;
    const bytes = new Uint8Array(capacity);
    const prefix = new Int32Array(capacity + 1);
    bytes.set(this.#bytes.subarray(this.#start, this.#end));
    prefix.set(this.#prefix.subarray(this.#start, this.#end + 1));
    this.#bytes = bytes;
    this.#prefix = prefix;
    this.#start = 0;
    this.#end = held;
  }

  // Looks for spellings starting before `scanEnd` (each is wholly inside the held bytes) and
  // answers the bytes it is done with; at one position the first pattern in order wins, and a
  // match's bytes are not searched again.
  #scan(scanEnd: number): Uint8Array {
    const { byFirstByte } = this.#index;
    const bytes = this.#bytes;
    const prefix = this.#prefix;
    const limit = this.#end;
    const parts: Uint8Array[] = [];
    let emitted = this.#start;
    let i = this.#start;
    while (i < scanEnd) {
      const candidates = byFirstByte[bytes[i] as number];
      const match = candidates && candidates.length > 0 ? matchAt(bytes, prefix, i, limit, candidates) : undefined;
      if (match) {
        if (i > emitted) parts.push(bytes.subarray(emitted, i));
        parts.push(match.replacement);
        i += match.bytes.length;
        emitted = i;
      } else i++;
    }
    const consumed = Math.max(i, emitted);
    if (consumed > emitted) parts.push(bytes.subarray(emitted, consumed));
    this.#start = consumed;
    // Always a copy: a reader may transfer what it is given, and a view would take this buffer with it.
    return parts.length === 1 ? (parts[0] as Uint8Array).slice() : concat(...parts);
  }
}

/** Room a scrubber's buffer keeps after its held bytes beyond the hold-back, so tiny patterns do not move tiny buffers on every push. */
const SCRUB_ROOM_BYTES = 16_384;

/** A pattern as the scan looks for it: with its bytes' hash, and base^length to cut a window's hash out of the prefix hashes. */
type IndexedPattern = ScrubPattern & { hash: number; shift: number };

interface PatternIndex {
  byFirstByte: IndexedPattern[][];
  holdBack: number;
  base: number;
}

// The hash is a polynomial in a random base modulo a prime below 2^26, so every product stays
// exact in a double. (Modulo 2^32 it is not a hash an attacker cannot steer: Thue-Morse strings
// collide for every odd base, and a secret ending in one made every window compare its bytes.)
// Modulo a prime, two different windows agree for at most `length` of the possible bases.
const MODULUS = 67_108_859;
const INVERSE = 1 / MODULUS;

/** `value` modulo MODULUS, for 0 <= value < 2^52: a multiply and a floor, three times as fast as `%` on a double. */
function reduce(value: number): number {
  const rest = value - Math.floor(value * INVERSE) * MODULUS;
  return rest < 0 ? rest + MODULUS : rest >= MODULUS ? rest - MODULUS : rest;
}

// Chosen at the first scrub, not at load: workerd refuses random values in global scope.
let randomBase: number | undefined;
function randomHashBase(): number {
  randomBase ??= 256 + ((crypto.getRandomValues(new Uint32Array(1))[0] as number) % (MODULUS - 512));
  return randomBase;
}

function hashOf(bytes: Uint8Array, b: number): number {
  let hash = 0;
  for (const byte of bytes) hash = reduce(hash * b + byte);
  return hash;
}

function power(exponent: number, b: number): number {
  let result = 1;
  for (let i = 0; i < exponent; i++) result = reduce(result * b);
  return result;
}

function matchAt(buffer: Uint8Array, prefix: Int32Array, at: number, limit: number, candidates: readonly IndexedPattern[]): IndexedPattern | undefined {
  outer: for (const pattern of candidates) {
    const bytes = pattern.bytes;
    const end = at + bytes.length;
    if (end > limit) continue;
    const window = reduce((prefix[end] as number) - reduce((prefix[at] as number) * pattern.shift) + MODULUS);
    if (window !== pattern.hash) continue;
    for (let j = 1; j < bytes.length; j++) if (buffer[at + j] !== bytes[j]) continue outer;
    return pattern;
  }
  return undefined;
}

// The patterns by their first byte, with their hashes, built once per set: one scrubText builds
// two scrubbers, and a result is scrubbed string by string with the same set.
const indexes = new WeakMap<readonly ScrubPattern[], PatternIndex>();

function indexOf(patterns: readonly ScrubPattern[]): PatternIndex {
  const known = indexes.get(patterns);
  if (known) return known;
  const b = randomHashBase();
  const byFirstByte: IndexedPattern[][] = Array.from({ length: 256 }, () => []);
  for (const pattern of patterns) {
    if (pattern.bytes.length === 0) continue;
    byFirstByte[pattern.bytes[0] as number]?.push({ ...pattern, hash: hashOf(pattern.bytes, b), shift: power(pattern.bytes.length, b) });
  }
  const index = { byFirstByte, base: b, holdBack: Math.max(0, ...patterns.map((pattern) => pattern.bytes.length - 1)) };
  indexes.set(patterns, index);
  return index;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  if (parts.length === 0) return new Uint8Array(0);
  if (parts.length === 1) return parts[0] as Uint8Array;
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** `bytes` with every spelling of the patterns' materials replaced. */
export function scrubBytes(bytes: Uint8Array, patterns: readonly ScrubPattern[]): Uint8Array {
  const scrubber = new ByteScrubber(patterns);
  return concat(scrubber.push(bytes), scrubber.flush());
}

/**
 * `text` with every spelling replaced: as UTF-8, and (for header values, which are bytes read as
 * Latin-1) once more over its code units as bytes.
 */
export function scrubText(text: string, patterns: readonly ScrubPattern[]): string {
  if (patterns.length === 0) return text;
  let out = text;
  const utf8 = encoder.encode(out);
  const scrubbedUtf8 = scrubBytes(utf8, patterns);
  // Unchanged text is answered as it came (a lone surrogate would not survive a UTF-8 round trip).
  if (!sameBytes(utf8, scrubbedUtf8)) out = new TextDecoder().decode(scrubbedUtf8);
  if (isLatin1(out)) {
    const latin1 = Uint8Array.from(out, (char) => char.charCodeAt(0));
    const scrubbed = scrubBytes(latin1, patterns);
    if (!sameBytes(latin1, scrubbed)) out = Array.from(scrubbed, (byte) => String.fromCharCode(byte)).join("");
  }
  return out;
}

function isLatin1(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) return false;
  return true;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A byte stream with every spelling replaced, holding back only what a chunk boundary needs. */
export function scrubStream(body: ReadableStream<Uint8Array>, patterns: readonly ScrubPattern[]): ReadableStream<Uint8Array> {
  const scrubber = new ByteScrubber(patterns);
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const out = scrubber.push(chunk instanceof Uint8Array ? chunk : new Uint8Array(chunk));
        if (out.length > 0) controller.enqueue(out);
      },
      flush(controller) {
        const out = scrubber.flush();
        if (out.length > 0) controller.enqueue(out);
      },
    }),
  );
}

/** Headers with each value scrubbed (every set-cookie line on its own), and none whose name spells material. */
export function scrubHeaders(headers: Headers, patterns: readonly ScrubPattern[]): Headers {
  const out = new Headers();
  // Names are case-insensitive and come lowercased: a header whose name spells material, in any
  // case, is dropped, since a name cannot hold [secret].
  const nameSpellings = patterns.filter((pattern) => pattern.replacement === REPLACEMENT_UTF8).map((pattern) => NAME_DECODER.decode(pattern.bytes).toLowerCase());
  for (const [name, value] of headers) {
    if (name.toLowerCase() === "set-cookie") continue;
    if (nameSpellings.some((spelling) => name.toLowerCase().includes(spelling))) continue;
    out.append(name, scrubText(value, patterns));
  }
  for (const cookie of headers.getSetCookie()) out.append("set-cookie", scrubText(cookie, patterns));
  return out;
}

/**
 * A JSON value with every spelling replaced in each string and object key; `scrubbed` says
 * whether anything was. Used on what a script returns, which may hold material it was echoed.
 */
export function scrubJsonValue(value: unknown, patterns: readonly ScrubPattern[]): { value: unknown; scrubbed: boolean } {
  let scrubbed = false;
  const text = (input: string) => {
    const out = scrubText(input, patterns);
    if (out !== input) scrubbed = true;
    return out;
  };
  const walk = (item: unknown): unknown => {
    if (typeof item === "string") return text(item);
    if (Array.isArray(item)) return item.map(walk);
    if (typeof item === "object" && item !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(item)) {
        Object.defineProperty(out, text(key), { value: walk(inner), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return item;
  };
  const result = patterns.length === 0 ? value : walk(value);
  return { value: result, scrubbed };
}
