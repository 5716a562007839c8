import { describe, expect, test } from "vitest";
import { placeholdersIn } from "../secret/secret-path.ts";
import { networkFilterOf, privateAddressPolicy } from "./address-guard.ts";
import { mayCarryPlaceholder, requestRefusal } from "./egress-rules.ts";

const encode = (text: string) => new TextEncoder().encode(text).buffer as ArrayBuffer;

// What the pipe would substitute in a request: placeholders in header values and in a body that is
// strict UTF-8 (egress-pipe.ts). A request for which this finds any must never leave directly.
function pipeFinds(headers: [string, string][], body: ArrayBuffer | null): boolean {
  const texts = headers.map(([, value]) => value);
  if (body) {
    try {
      texts.push(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body));
    } catch {
      // Not UTF-8: the pipe substitutes nothing in it.
    }
  }
  return texts.some((text) => placeholdersIn(text).length > 0);
}

const PLACEHOLDER = 'getSecret("/secrets/token")';

// Spellings a script might try, to get a placeholder past the check and still have it substituted.
const SMUGGLED: Array<{ name: string; url?: string; headers?: [string, string][]; body?: ArrayBuffer }> = [
  { name: "a header value", headers: [["authorization", `Bearer ${PLACEHOLDER}`]] },
  { name: "a header value with spaces inside", headers: [["x-key", "getSecret(  '/secrets/token'  )"]] },
  { name: "a header name", headers: [["x-getsecret", "1"]] },
  { name: "a JSON body", body: encode(JSON.stringify({ key: PLACEHOLDER })) },
  { name: "a form body", body: encode(`key=${PLACEHOLDER}`) },
  { name: "a body behind a UTF-8 BOM", body: encode(`\uFEFF${PLACEHOLDER}`) },
  { name: "a body in another case", body: encode("GETSECRET('/secrets/token')") },
  { name: "a binary body with the placeholder inside", body: new Uint8Array([0xff, 0x00, ...new TextEncoder().encode(PLACEHOLDER), 0xfe]).buffer },
  { name: "the URL's query", url: `http://127.0.0.1/?q=${PLACEHOLDER}` },
  { name: "the URL's query, percent-encoded", url: "http://127.0.0.1/?q=%67%65%74%53%65%63%72%65%74%28%22%2Fsecrets%2Ftoken%22%29" },
  { name: "the URL's path", url: "http://127.0.0.1/getSecret/x" },
];

describe("which requests may leave without the pipe", () => {
  test.each(SMUGGLED)("a placeholder in $name takes the pipe", ({ url, headers, body }) => {
    expect(mayCarryPlaceholder(url ?? "http://127.0.0.1/", headers ?? [], body ?? null)).toBe(true);
  });

  test("whatever the pipe would substitute, the check sends to the pipe (a superset, over every sample)", () => {
    const samples = SMUGGLED.filter((sample) => sample.url === undefined);
    const substituted = samples.filter(({ headers = [], body = null }) => pipeFinds(headers, body));
    const missed = substituted.filter(({ headers = [], body = null }) => !mayCarryPlaceholder("http://127.0.0.1/", headers, body));
    expect(missed.map((sample) => sample.name)).toEqual([]);
    // The samples include ones the pipe substitutes, or the check above would prove nothing.
    expect(substituted.length).toBeGreaterThan(4);
  });

  test("requests without the marker leave directly: no headers, ordinary headers and bodies, a UTF-16 body the pipe cannot read", () => {
    expect(mayCarryPlaceholder("http://127.0.0.1:8080/tiny", [], null)).toBe(false);
    expect(mayCarryPlaceholder("https://api.example.com/v1?x=1", [["content-type", "application/json"], ["authorization", "Bearer abc"]], encode('{"secret":"get it"}'))).toBe(false);
    const utf16 = new Uint8Array([...PLACEHOLDER].flatMap((char) => [char.charCodeAt(0), 0])).buffer;
    expect(pipeFinds([], utf16)).toBe(false);
    expect(mayCarryPlaceholder("http://127.0.0.1/", [], utf16)).toBe(false);
  });
});

describe("the checks both roads share", () => {
  test("only http(s), and no private destination outside the policy", () => {
    const none = privateAddressPolicy(undefined);
    expect(requestRefusal(new URL("ftp://example.com/"), none)?.details).toEqual({ reason: "scheme" });
    expect(requestRefusal(new URL("http://10.0.0.1/"), none)?.code).toBe("EGRESS_REFUSED");
    expect(requestRefusal(new URL("http://127.0.0.1:9/"), none)?.code).toBe("EGRESS_REFUSED");
    expect(requestRefusal(new URL("http://127.0.0.1:9/"), privateAddressPolicy("loopback"))).toBeUndefined();
    expect(requestRefusal(new URL("http://127.0.0.2:9/"), privateAddressPolicy("loopback"))?.code).toBe("EGRESS_REFUSED");
    expect(requestRefusal(new URL("https://example.com/"), none)).toBeUndefined();
  });

  test("the runner's network filter follows the policy; a policy of named hosts has none (nothing leaves directly)", () => {
    expect(networkFilterOf(privateAddressPolicy(""))).toEqual({ allow: ["public"], deny: ["private", "local"] });
    expect(networkFilterOf(privateAddressPolicy("loopback"))).toEqual({ allow: ["public", "127.0.0.1/32", "::1/128"], deny: [] });
    expect(networkFilterOf(privateAddressPolicy("1"))?.allow).toContain("private");
    expect(networkFilterOf(privateAddressPolicy("nas.lan,10.0.0.5"))).toBeUndefined();
  });
});
