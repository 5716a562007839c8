import { ItxError } from "iterate/errors";
import { unwrapCoded } from "../api/coded-result.ts";
import { PRINTABLE_ASCII, placeholdersIn, substitute } from "../secret/secret-path.ts";
import type { SecretDurableObject } from "../secret/secret-durable-object.ts";
import { privateAddressPolicy, type PrivateAddressPolicy } from "./address-guard.ts";
import { markEgress, requestRefusal } from "./egress-rules.ts";
import { noteMaterialsUsed } from "./materials-in-use.ts";
import { scrubHeaders, scrubPatterns, scrubStream, scrubText } from "./secret-scrub.ts";
import { LIMITS, limitDetails } from "../limits.ts";
import { readRequestBody } from "../limits/request-body.ts";


/**
 * Reads a request's body once and answers a maker of identical requests. The body is read as it
 * arrives and refused as soon as it passes EGRESS_BODY_MAX_BYTES (or its declared length does),
 * and must arrive within EGRESS_BODY_READ_TIMEOUT_MS: a stream with no length could otherwise be
 * read whole into memory, however long, before its size was looked at.
 */
export async function bufferedRequest(request: Request): Promise<() => Request> {
  const max = LIMITS.EGRESS_BODY_MAX_BYTES;
  const tooLarge = () => new ItxError("INVALID_ARGUMENT", `an egress request body is at most ${max} bytes`, { details: limitDetails("EGRESS_BODY_MAX_BYTES") });
  const body = request.body ? await readRequestBody(request, max, LIMITS.EGRESS_BODY_READ_TIMEOUT_MS, tooLarge) : null;
  return () => new Request(request.url, { method: request.method, headers: request.headers, body, redirect: "manual" });
}

export interface EgressScope {
  projectId: string;
  /** The context whose code sent the request. */
  origin: string;
  principal: string;
  /** Set when that code runs in a jail: it may send requests (when granted fetch) but spends no secret. */
  jailed?: boolean;
}

/** The scheme, private-address and upgrade checks of egress-rules.ts, thrown as EGRESS_REFUSED; nothing is sent. */
export function assertPublicDestination(url: URL, policy: PrivateAddressPolicy, headers: Headers): void {
  const refusal = requestRefusal(url, policy, headers);
  if (refusal) throw new ItxError(refusal.code, refusal.message, { details: refusal.details });
}

/**
 * The terminal step of egress, reached when no `fetch` shadow on the origin's chain took the
 * request. Order matters: the destination is checked before any secret is decrypted, and
 * placeholders are replaced only here, so shadows and interceptors only ever see placeholders.
 */
export async function sendThroughPipe(env: Env, scope: EgressScope, input: unknown, init?: unknown): Promise<Response> {
  const request = toRequest(input, init);
  const url = new URL(request.url);
  const policy = privateAddressPolicy(env.EGRESS_ALLOW_PRIVATE_ADDRESSES);
  assertPublicDestination(url, policy, request.headers);

  // Placeholders are read and substituted in header values only. A body is sent as written: a
  // destination may keep what it is sent and answer it to a later request (a gist, a message, a
  // stored document), so material in a body would come back out where no scrub sees it, and a
  // body often carries text others wrote (a relayed message spelling a placeholder).
  const headers = new Headers(request.headers);
  const paths = [...new Set([...headers].flatMap(([, value]) => placeholdersIn(value)))];
  if (paths.length > 0 && scope.jailed) {
    throw new ItxError("EGRESS_REFUSED", `code in the jail ${scope.origin} cannot send secrets; a jail's grants name no secret`, {
      details: { reason: "jail" },
    });
  }
  const materials = new Map<string, string>();
  for (const path of paths) {
    const stub = env.SECRET.getByName(`${scope.projectId}:${path}`) as unknown as Pick<SecretDurableObject, "use">;
    materials.set(path, unwrapCoded(await stub.use({ url: url.toString(), origin: scope.origin, principal: scope.principal })));
  }
  if (materials.size > 0) {
    // Before sending: a run that settles while this request is in flight is still scrubbed of it.
    noteMaterialsUsed(scope, materials.values());
    substituteHeaders(headers, materials);
  }
  markEgress(headers, policy);
  // The body travels as it came, with its length. Redirects are not followed: one could lead past the guard.
  const response = await fetch(new Request(request, { headers, redirect: "manual" }));
  return materials.size > 0 ? scrub(response, [...materials.values()]) : response;
}

/** A Request from fetch's arguments, or INVALID_ARGUMENT. */
export function toRequest(input: unknown, init?: unknown): Request {
  if (input instanceof Request) return init === undefined ? input : new Request(input, init as RequestInit);
  if (typeof input === "string" || input instanceof URL) {
    try {
      return new Request(String(input), init as RequestInit | undefined);
    } catch (cause) {
      throw new ItxError("INVALID_ARGUMENT", `fetch needs an absolute URL, got ${JSON.stringify(String(input).slice(0, 120))}`, { cause });
    }
  }
  throw new ItxError("INVALID_ARGUMENT", "fetch takes a Request or a URL string");
}

/**
 * Replaces placeholders in every header value with their material, or throws EGRESS_REFUSED when
 * a value would then not be printable ASCII. A control character could end the header (CR LF) and
 * start another; a non-ASCII one is sent as UTF-8, and workerd writes the whole value into its log
 * when it does that. Updates refuse such material (`parseSecretUpdate`); this holds for what was
 * stored before. The refusal names the header, never the material.
 */
export function substituteHeaders(headers: Headers, materials: ReadonlyMap<string, string>): void {
  // Collected first: setting a header while iterating would revisit it.
  for (const [name, value] of Array.from(headers)) {
    const substituted = substitute(value, materials);
    if (substituted === value) continue;
    if (!PRINTABLE_ASCII.test(substituted)) {
      throw new ItxError("EGRESS_REFUSED", `a secret substituted into the ${JSON.stringify(name)} header makes a value that is not printable ASCII`, {
        details: { reason: "header-value", header: name },
      });
    }
    headers.set(name, substituted);
  }
}

// Encodings fetch() decodes before the body reaches us: the scrub reads these as plain bytes.
const DECODED_ENCODINGS: ReadonlySet<string> = new Set(["", "identity", "gzip", "br"]);

// A remote that echoes what it was sent must not hand material back to the caller. Headers
// (set-cookie included), the status text and the body's bytes are scrubbed, whatever the content
// type or charset (see secret-scrub.ts). The body streams: each chunk is released at once except
// the tail that could begin a spelling of a material. Gzip and brotli answers arrive decoded from
// fetch() and keep their content-encoding header, so the runtime encodes them again on the way out.
function scrub(response: Response, materials: string[]): Response {
  const encoding = (response.headers.get("content-encoding") ?? "").trim().toLowerCase();
  if (!DECODED_ENCODINGS.has(encoding)) {
    void response.body?.cancel();
    throw new ItxError("EGRESS_REFUSED", `the answer is encoded as ${JSON.stringify(encoding.slice(0, 40))}, which the secret scrub cannot read`, {
      details: { reason: "unreadable-content-encoding" },
    });
  }
  const patterns = scrubPatterns(materials);
  const headers = scrubHeaders(response.headers, patterns);
  headers.delete("content-length");
  const body = response.body ? scrubStream(response.body, patterns) : null;
  return new Response(body, { status: response.status, statusText: scrubText(response.statusText, patterns), headers });
}
