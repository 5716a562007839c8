import { describe, expect, test } from "vitest";
import { placeholdersIn } from "../secret/secret-path.ts";
import { networkFilterOf, privateAddressPolicy } from "./address-guard.ts";
import { EGRESS_MARK_HEADER, markEgress, mayCarryPlaceholder, refusesEgressMark, requestRefusal } from "./egress-rules.ts";

// What the pipe would substitute in a request: placeholders in header values (egress-pipe.ts).
// A request for which this finds any must never leave directly.
function pipeFinds(headers: [string, string][]): boolean {
  return headers.some(([, value]) => placeholdersIn(value).length > 0);
}

const PLACEHOLDER = 'getSecret("/secrets/token")';

// Spellings a script might try, to get a placeholder past the check and still have it substituted.
const SMUGGLED: Array<{ name: string; url?: string; headers?: [string, string][] }> = [
  { name: "a header value", headers: [["authorization", `Bearer ${PLACEHOLDER}`]] },
  { name: "a header value with spaces inside", headers: [["x-key", "getSecret(  '/secrets/token'  )"]] },
  { name: "a header value in another case", headers: [["x-key", "GETSECRET('/secrets/token')"]] },
  { name: "a header name", headers: [["x-getsecret", "1"]] },
  { name: "the URL's query", url: `http://127.0.0.1/?q=${PLACEHOLDER}` },
  { name: "the URL's query, percent-encoded", url: "http://127.0.0.1/?q=%67%65%74%53%65%63%72%65%74%28%22%2Fsecrets%2Ftoken%22%29" },
  { name: "the URL's path", url: "http://127.0.0.1/getSecret/x" },
];

describe("which requests may leave without the pipe", () => {
  test.each(SMUGGLED)("a placeholder in $name takes the pipe", ({ url, headers }) => {
    expect(mayCarryPlaceholder(url ?? "http://127.0.0.1/", headers ?? [])).toBe(true);
  });

  test("whatever the pipe would substitute, the check sends to the pipe (a superset, over every sample)", () => {
    const samples = SMUGGLED.filter((sample) => sample.url === undefined);
    const substituted = samples.filter(({ headers = [] }) => pipeFinds(headers));
    const missed = substituted.filter(({ headers = [] }) => !mayCarryPlaceholder("http://127.0.0.1/", headers));
    expect(missed.map((sample) => sample.name)).toEqual([]);
    // The samples include ones the pipe substitutes, or the check above would prove nothing.
    expect(substituted.length).toBeGreaterThan(1);
  });

  test("requests without the marker in their URL or headers leave directly", () => {
    expect(mayCarryPlaceholder("http://127.0.0.1:8080/tiny", [])).toBe(false);
    expect(mayCarryPlaceholder("https://api.example.com/v1?x=1", [["content-type", "application/json"], ["authorization", "Bearer abc"]])).toBe(false);
  });
});

describe("the checks both roads share", () => {
  test("only http(s), and no private destination outside the policy", () => {
    const none = privateAddressPolicy(undefined);
    expect(requestRefusal(new URL("ftp://example.com/"), none, new Headers())?.details).toEqual({ reason: "scheme" });
    expect(requestRefusal(new URL("http://10.0.0.1/"), none, new Headers())?.code).toBe("EGRESS_REFUSED");
    expect(requestRefusal(new URL("http://127.0.0.1:9/"), none, new Headers())?.code).toBe("EGRESS_REFUSED");
    expect(requestRefusal(new URL("http://127.0.0.1:9/"), privateAddressPolicy("loopback"), new Headers())).toBeUndefined();
    expect(requestRefusal(new URL("http://127.0.0.2:9/"), privateAddressPolicy("loopback"), new Headers())?.code).toBe("EGRESS_REFUSED");
    expect(requestRefusal(new URL("https://example.com/"), none, new Headers())).toBeUndefined();
  });

  test("no upgraded connection (a WebSocket) while private addresses are reachable: the inspectors on this machine speak only that", () => {
    const upgrade = new Headers({ Upgrade: "websocket", Connection: "Upgrade", Origin: "http://127.0.0.1" });
    for (const policy of [privateAddressPolicy("loopback"), privateAddressPolicy("1"), privateAddressPolicy("nas.lan")]) {
      // Any host: a public-looking name may resolve to 127.0.0.1. (A policy of named hosts refuses 127.0.0.1 itself.)
      const urls = policy.kind === "hosts" && !policy.hosts.has("127.0.0.1") ? ["http://localtest.me:9229/ws", "https://example.com/socket"] : ["http://127.0.0.1:9229/ws", "http://localtest.me:9229/ws", "https://example.com/socket"];
      for (const url of urls) {
        expect(requestRefusal(new URL(url), policy, upgrade)).toMatchObject({ code: "EGRESS_REFUSED", details: { reason: "upgrade" } });
      }
      expect(requestRefusal(new URL("http://localtest.me:9229/json"), policy, new Headers({ "x-upgrade-note": "no" }))).toBeUndefined();
    }
    // A deployment reaches no private address: a WebSocket to a public host is not refused here.
    expect(requestRefusal(new URL("https://example.com/socket"), privateAddressPolicy(undefined), upgrade)).toBeUndefined();
  });

  test("while private addresses are reachable every request carries the egress mark, over any value the code wrote, and the OS refuses it; a deployment does neither", () => {
    for (const policy of [privateAddressPolicy("loopback"), privateAddressPolicy("1"), privateAddressPolicy("nas.lan")]) {
      const headers = new Headers({ [EGRESS_MARK_HEADER]: "0", "x-other": "kept" });
      markEgress(headers, policy);
      expect(headers.get(EGRESS_MARK_HEADER)).toBe("1");
      expect(headers.get("x-other")).toBe("kept");
      expect(refusesEgressMark(headers, policy)).toBe(true);
      expect(refusesEgressMark(new Headers({ "x-other": "kept" }), policy)).toBe(false);
    }
    const deployment = privateAddressPolicy("0");
    const headers = new Headers();
    markEgress(headers, deployment);
    expect([...headers]).toEqual([]);
    expect(refusesEgressMark(new Headers({ [EGRESS_MARK_HEADER]: "1" }), deployment)).toBe(false);
  });

  test("the runner's network filter follows the policy; a policy of named hosts has none (nothing leaves directly)", () => {
    expect(networkFilterOf(privateAddressPolicy(""))).toEqual({ allow: ["public"], deny: ["private", "local"] });
    expect(networkFilterOf(privateAddressPolicy("loopback"))).toEqual({ allow: ["public", "127.0.0.1/32", "::1/128"], deny: [] });
    expect(networkFilterOf(privateAddressPolicy("1"))?.allow).toContain("private");
    expect(networkFilterOf(privateAddressPolicy("nas.lan,10.0.0.5"))).toBeUndefined();
  });
});
