import { describe, expect, test } from "vitest";
import { placeholdersIn, substitute, urlAllowed } from "./secret-path.ts";

describe("secret placeholders", () => {
  test("are found as written and in their JSON-escaped form", () => {
    expect(placeholdersIn('Bearer getSecret("/secrets/a")')).toEqual(["/secrets/a"]);
    expect(placeholdersIn(JSON.stringify({ key: 'getSecret("/secrets/b")', again: "getSecret('/secrets/b')" }))).toEqual(["/secrets/b"]);
    expect(placeholdersIn("getSecret(/secrets/c)")).toEqual([]);
  });

  test("substitution keeps JSON valid and leaves unknown paths alone", () => {
    const body = JSON.stringify({ key: 'getSecret("/secrets/b")', other: 'getSecret("/secrets/z")' });
    const out = substitute(body, new Map([["/secrets/b", "s3cr3t"]]));
    expect(JSON.parse(out)).toEqual({ key: "s3cr3t", other: 'getSecret("/secrets/z")' });
    const quoted = substitute(body, new Map([["/secrets/b", 'has "quotes" and \\ slash']]));
    expect(JSON.parse(quoted).key).toBe('has "quotes" and \\ slash');
  });

  test("the allowlist matches origin and path prefix", () => {
    const allow = ["https://api.slack.com/api/", "http://127.0.0.1:8080/"];
    expect(urlAllowed(new URL("https://api.slack.com/api/chat.postMessage"), allow)).toBe(true);
    expect(urlAllowed(new URL("https://api.slack.com/other"), allow)).toBe(false);
    expect(urlAllowed(new URL("https://evil.example/api/"), allow)).toBe(false);
    expect(urlAllowed(new URL("http://127.0.0.1:8081/"), allow)).toBe(false);
    // A path without a trailing slash allows itself and what lies below it, not its longer neighbours.
    const scoped = ["https://h.example/acme"];
    expect(urlAllowed(new URL("https://h.example/acme"), scoped)).toBe(true);
    expect(urlAllowed(new URL("https://h.example/acme/repos"), scoped)).toBe(true);
    expect(urlAllowed(new URL("https://h.example/acme-attacker/repos"), scoped)).toBe(false);
    expect(urlAllowed(new URL("https://h.example/acmeX"), scoped)).toBe(false);
    expect(urlAllowed(new URL("https://api.slack.com/apiX"), ["https://api.slack.com/api"])).toBe(false);
    // Dot segments are resolved by the URL parser before the match.
    expect(urlAllowed(new URL("https://api.slack.com/api/../admin"), allow)).toBe(false);
  });
});
