import { RpcStub } from "cloudflare:workers";
import { ItxError, errorCode, errorMessage } from "iterate/errors";
import { callMembers } from "../capability-host/source-capability.ts";
import { pathProxy } from "../itx/invoke-fallback.ts";
import { materialKey, materialsInPlay, recentOverflow, watchMaterials, type MaterialScope, type MaterialWatch } from "../egress/materials-in-use.ts";
import { LIMITS } from "../limits.ts";
import { ByteScrubber, scrubBytes, scrubHeaders, scrubPatterns, scrubText, type ScrubPattern } from "../egress/secret-scrub.ts";

// The scrub on the way out of loaded code that is called rather than run: a dynamic worker's
// methods (stateless or durable) and a source capability's. What a call answers, or throws, is
// scrubbed of every material its scope used during the call and lately (materials-in-use.ts), in
// the spellings the response scrub knows, before the caller sees it:
// - strings and object keys at any depth, Map and Set entries, bytes, an error's message;
// - a Response's status text and headers, and its body, and a returned ReadableStream, as they
//   stream: each chunk is scrubbed of what the scope has used by the time it passes, so material
//   the code fetches after it answered is caught too;
// - a returned stub or function is handed out wrapped, so every call on it passes this scrub.
// A value the scrub cannot read (a body in a content-encoding, an object of a kind it does not
// know) is refused with EGRESS_REFUSED (`details.reason: "unscrubbable-result"`) when material is
// in play, and passes untouched when none is. Nothing is searched when the scope has used none.

/** `details.reason` of the refusal of a result the scrub cannot read while material is in play. */
export const UNSCRUBBABLE = "unscrubbable-result";

/**
 * Calls into loaded code acting as `scope` and answers its result (or throws its error) scrubbed.
 *
 * @example
 * return scrubbedCall(props, () => callMembers(entrypoint, path, args));
 */
export async function scrubbedCall(scope: MaterialScope, call: () => unknown): Promise<unknown> {
  const watch = watchMaterials(scope);
  let result: unknown;
  try {
    result = await call();
  } catch (error) {
    throw scrubbedError(error, watch);
  } finally {
    watch.end();
  }
  const materials = watch.materials();
  if (materials.length === 0) return needsWrapping(result, new Set()) ? outward(result, { materials, patterns: [], scope }) : result;
  try {
    watch.assertWithinLimit();
  } catch (refusal) {
    discard(result);
    throw refusal;
  }
  return outward(result, { materials, patterns: keptScrubPatterns(materials), scope });
}

// What a result is scrubbed of, and the scope whose later use its live parts follow (none for
// an error's details, which cannot hold live parts).
interface Scrub {
  materials: readonly string[];
  patterns: readonly ScrubPattern[];
  scope: MaterialScope | undefined;
}

function scrubbedError(error: unknown, watch: MaterialWatch): unknown {
  const materials = watch.materials();
  if (materials.length === 0) return error;
  try {
    watch.assertWithinLimit();
  } catch (refusal) {
    return refusal;
  }
  return scrubError(error, { materials, patterns: keptScrubPatterns(materials), scope: undefined });
}

// An error rebuilt with its message scrubbed, keeping its code and name (the stack, which quotes
// the message, is dropped) and its details scrubbed like a result.
function scrubError(error: unknown, scrub: Scrub): Error {
  const { patterns } = scrub;
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : errorMessage(error);
  const out = new Error(scrubText(message, patterns));
  out.name = error instanceof Error ? scrubText(error.name, patterns) : "Error";
  out.stack = `${out.name}: ${out.message}`;
  if (code !== undefined) Object.assign(out, { code });
  const details = (error as { details?: unknown } | null)?.details;
  if (details !== undefined) Object.assign(out, { details: copyOut(details, { ...scrub, scope: undefined }) });
  return out;
}

// Whether a result holds something that stays live after the call (a stub, a function, a stream,
// a Response): each must be wrapped even when no material is in play, or a later use of it
// would pass no scrub. Plain data needs nothing when no material is in play.
function needsWrapping(value: unknown, seen: Set<object>): boolean {
  if (typeof value === "function") return true;
  if (typeof value !== "object" || value === null || seen.has(value)) return false;
  seen.add(value);
  if (value instanceof Response || value instanceof ReadableStream || isStub(value)) return true;
  if (Array.isArray(value)) return value.some((item) => needsWrapping(item, seen));
  if (value instanceof Map) return [...value].some(([key, item]) => needsWrapping(key, seen) || needsWrapping(item, seen));
  if (value instanceof Set) return [...value].some((item) => needsWrapping(item, seen));
  if (isPlainObject(value)) return Object.values(value).some((item) => needsWrapping(item, seen));
  return false;
}

function outward(value: unknown, scrub: Scrub): unknown {
  try {
    return copyOut(value, scrub);
  } catch (error) {
    discard(value);
    throw error;
  }
}

// A copy of `value` with every string scrubbed and every live part wrapped. Without a scope
// (an error's details) live parts are refused: an error cannot carry them anyway.
function copyOut(value: unknown, scrub: Scrub): unknown {
  const { patterns, scope } = scrub;
  const seen = new Map<object, unknown>();
  const text = (input: string) => (patterns.length === 0 ? input : scrubText(input, patterns));
  const walk = (item: unknown): unknown => {
    if (typeof item === "string") return text(item);
    if (typeof item === "function") return wrapStub(item, live(scope, "a stub"));
    if (typeof item !== "object" || item === null) return item;
    const copied = seen.get(item);
    if (copied !== undefined) return copied;
    if (isStub(item)) return wrapStub(item, live(scope, "a stub"));
    if (Array.isArray(item)) {
      const out: unknown[] = [];
      seen.set(item, out);
      for (const inner of item) out.push(walk(inner));
      return out;
    }
    if (isPlainObject(item)) {
      const out: Record<string, unknown> = {};
      seen.set(item, out);
      for (const [key, inner] of Object.entries(item)) {
        Object.defineProperty(out, text(key), { value: walk(inner), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    if (item instanceof Map) {
      const out = new Map<unknown, unknown>();
      seen.set(item, out);
      for (const [key, inner] of item) out.set(walk(key), walk(inner));
      return out;
    }
    if (item instanceof Set) {
      const out = new Set<unknown>();
      seen.set(item, out);
      for (const inner of item) out.add(walk(inner));
      return out;
    }
    if (item instanceof Date || item instanceof WritableStream) return item;
    if (item instanceof ArrayBuffer) return patterns.length === 0 ? item : scrubBytes(new Uint8Array(item), patterns).slice().buffer;
    if (ArrayBuffer.isView(item)) return patterns.length === 0 ? item : scrubView(item, patterns);
    if (item instanceof Error) return patterns.length === 0 ? item : scrubError(item, scrub);
    if (item instanceof RegExp) return patterns.length === 0 ? item : new RegExp(text(item.source), item.flags);
    if (item instanceof Headers) return patterns.length === 0 ? item : scrubHeaders(item, patterns);
    if (item instanceof Response) return scrubResponse(item, scrub, live(scope, "a Response"));
    if (item instanceof ReadableStream) return liveScrub(item as ReadableStream<Uint8Array>, scrub, live(scope, "a ReadableStream"), false);
    if (patterns.length === 0) return item;
    throw unscrubbable(`a ${Object.prototype.toString.call(item).slice(8, -1)}`);
  };
  return walk(value);
}

function live(scope: MaterialScope | undefined, what: string): MaterialScope {
  if (scope === undefined) throw unscrubbable(`${what} inside an error`);
  return scope;
}

// Typed loosely: RpcStub's own type is too deep for the checker to narrow with.
const STUB_CLASS = RpcStub as unknown as abstract new (...args: never[]) => object;

function isStub(value: object): boolean {
  return value instanceof STUB_CLASS;
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function scrubView(view: ArrayBufferView, patterns: readonly ScrubPattern[]): ArrayBufferView {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  const scrubbed = scrubBytes(bytes, patterns);
  if (scrubbed === bytes || (scrubbed.length === bytes.length && scrubbed.every((byte, i) => byte === bytes[i]))) return view;
  // The replacement changes the length: what was a wider view comes back as its bytes.
  return scrubbed.slice();
}

// A stub (or function) handed out wrapped: calling it, or any path on it, is one scrubbed call.
// Disposing the wrapper disposes the stub.
function wrapStub(stub: unknown, scope: MaterialScope): unknown {
  const callable = stub as ((...args: unknown[]) => unknown) & Partial<Disposable>;
  return pathProxy(
    {
      invokeCapability: ({ path, args }) => scrubbedCall(scope, () => (path.length === 0 ? callable(...args) : callMembers(callable, path, args))),
      [Symbol.dispose]: () => callable[Symbol.dispose]?.(),
    },
    [],
  );
}

function scrubResponse(response: Response, scrub: Scrub, scope: MaterialScope): Response {
  const { patterns } = scrub;
  // A WebSocket cannot cross an RPC boundary (DataCloneError), and its messages could not be scrubbed.
  if (response.webSocket) throw unscrubbable("a WebSocket");
  const encoding = (response.headers.get("content-encoding") ?? "").trim().toLowerCase();
  const encoded = encoding !== "" && encoding !== "identity";
  if (encoded && patterns.length > 0) throw unscrubbable(`a body encoded as ${JSON.stringify(encoding.slice(0, 40))}`);
  const headers = patterns.length === 0 ? new Headers(response.headers) : scrubHeaders(response.headers, patterns);
  const body = response.body === null ? null : liveScrub(response.body, scrub, scope, encoded);
  // Scrubbing can change the body's length.
  if (body !== null) headers.delete("content-length");
  const statusText = patterns.length === 0 ? response.statusText : scrubText(response.statusText, patterns);
  return new Response(body, { status: response.status, statusText, headers });
}

// A byte stream scrubbed of what the scope has used by the time each chunk passes: the set only
// grows while it streams. A chunk passes untouched while the scope has used no material. An
// encoded body cannot be read: once material comes into play it fails instead.
function liveScrub(body: ReadableStream<Uint8Array>, scrub: Scrub, scope: MaterialScope, encoded: boolean): ReadableStream<Uint8Array> {
  const key = materialKey(scope);
  const known = new Set(scrub.materials);
  let scrubber = scrub.patterns.length === 0 ? undefined : new ByteScrubber(scrub.patterns);
  let version: number | undefined;
  const reader = body.getReader();
  // The next bytes to release (possibly none: all held back), or undefined at the end.
  const next = async (): Promise<Uint8Array | undefined> => {
    const { done, value } = await reader.read();
    if (done) return undefined;
    let bytes = value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBufferLike);
    const inPlay = materialsInPlay(key);
    if (inPlay?.overflowed) throw recentOverflow();
    if (inPlay && inPlay.version !== version) {
      version = inPlay.version;
      const before = known.size;
      for (const material of inPlay.materials) known.add(material);
      if (known.size > before) {
        if (encoded) throw unscrubbable("a body in a content-encoding, and secret material came into play while it streamed");
        // What the last scrubber held back is searched again with the grown set.
        const held = scrubber?.takeHeld();
        if (held && held.length > 0) bytes = concatBytes(held, bytes);
        scrubber = new ByteScrubber(keptScrubPatterns([...known]));
      }
    }
    return scrubber ? scrubber.push(bytes) : bytes;
  };
  // Pulled chunk by chunk from the source: lighter than pipeThrough, which puts a writable side
  // and its promises between. A pull must enqueue something or end, or the stream stalls.
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const out = await next();
        if (out === undefined) {
          const rest = scrubber?.flush();
          if (rest && rest.length > 0) controller.enqueue(rest);
          controller.close();
          return;
        }
        if (out.length > 0) {
          controller.enqueue(out);
          return;
        }
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

// Scrub patterns of a set of materials, kept for the sets used last (at most
// SCRUB_PATTERNS_CACHE_MAX_BYTES of spellings): a scope that uses a secret asks for the same set
// call after call. A set larger than the bound is built for each call and not kept.
const patternSets = new Map<string, { patterns: ScrubPattern[]; bytes: number }>();
let patternBytes = 0;

/** The scrub patterns of `materials`, from the kept sets when there (runs ask for them too: run-script.ts). */
export function keptScrubPatterns(materials: readonly string[]): ScrubPattern[] {
  const key = JSON.stringify(materials.toSorted());
  const kept = patternSets.get(key);
  if (kept) {
    // Most recently used last.
    patternSets.delete(key);
    patternSets.set(key, kept);
    return kept.patterns;
  }
  const patterns = scrubPatterns(materials);
  const bytes = patterns.reduce((total, pattern) => total + pattern.bytes.length + pattern.replacement.length, key.length);
  if (bytes > LIMITS.SCRUB_PATTERNS_CACHE_MAX_BYTES) return patterns;
  patternSets.set(key, { patterns, bytes });
  patternBytes += bytes;
  for (const [oldest, set] of patternSets) {
    if (patternBytes <= LIMITS.SCRUB_PATTERNS_CACHE_MAX_BYTES) break;
    patternSets.delete(oldest);
    patternBytes -= set.bytes;
  }
  return patterns;
}

/** Sets of scrub patterns kept, and their bytes (for tests). */
export function scrubPatternsCacheSize(): { sets: number; bytes: number } {
  return { sets: patternSets.size, bytes: patternBytes };
}

function unscrubbable(what: string): ItxError {
  return new ItxError("EGRESS_REFUSED", `the code answered ${what}, which the secret scrub cannot read while secret material is in play; it is withheld`, {
    details: { reason: UNSCRUBBABLE },
  });
}

// A result that is not handed out: its streams are cancelled and its stubs released.
function discard(value: unknown): void {
  try {
    if (value instanceof Response) void value.body?.cancel().catch(() => undefined);
    else if (value instanceof ReadableStream) void value.cancel().catch(() => undefined);
    else if (typeof value === "function" || (typeof value === "object" && value !== null && isStub(value))) (value as Partial<Disposable>)[Symbol.dispose]?.();
  } catch {
    // Nothing more to release.
  }
}
