import { exports } from "cloudflare:workers";
import { describe, expect, test } from "vitest";

describe("the dashboard is served as static assets beside the OS's own routes", () => {
  test("GET / answers the page with a CSP that allows only this origin, and no secret", async () => {
    const response = await exports.default.fetch("http://os.test/");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    // The REPL runs its source on the OS (itx.run): nothing in the page may evaluate strings.
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toContain("script-src 'self';");
    const html = await response.text();
    expect(html).toMatch(/<script type="module"[^>]* src="\/assets\/index-[^"]+\.js"/);
    expect(html).not.toMatch(/https?:\/\//);
    const script = html.match(/src="(\/assets\/[^"]+\.js)"/)?.[1] as string;
    const bundle = await (await exports.default.fetch(`http://os.test${script}`)).text();
    expect(bundle).toContain("/auth/sign-in");
    expect(bundle).not.toContain("workerd-test-secret");
    expect(bundle).not.toContain("iterate-local-admin-secret");
  });

  test("the REPL's sandbox page alone may eval: opaque origin, no network, framed only by the dashboard", async () => {
    const response = await exports.default.fetch("http://os.test/repl-sandbox");
    expect(response.status).toBe(200);
    const csp = response.headers.get("content-security-policy") ?? "";
    // Sandboxed by its own header too, so it is an opaque origin even when opened directly.
    expect(csp).toMatch(/^sandbox allow-scripts;/);
    expect(csp).not.toContain("allow-same-origin");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self' 'unsafe-eval'");
    expect(csp).toContain("connect-src 'none'");
    expect(csp).toContain("frame-ancestors 'self'");
    expect(response.headers.get("x-frame-options")).toBe("SAMEORIGIN");
    const html = await response.text();
    expect(html).toContain('<script src="/repl-sandbox.js"></script>');
    const script = await exports.default.fetch("http://os.test/repl-sandbox.js");
    expect(script.status).toBe(200);
    expect(await script.text()).toContain("iterate/repl-sandbox-port");
    // Every other page keeps the dashboard's policy, without eval.
    expect((await exports.default.fetch("http://os.test/")).headers.get("content-security-policy")).not.toContain("unsafe-eval");
  });

  test("/health, /api and unknown paths stay the Worker's", async () => {
    expect(await (await exports.default.fetch("http://os.test/health")).json()).toMatchObject({ ok: true });
    expect((await exports.default.fetch("http://os.test/api")).status).toBe(405);
    const missing = await exports.default.fetch("http://os.test/no/such/page");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: "NOT_FOUND" });
    expect((await exports.default.fetch("http://os.test/", { method: "POST" })).status).toBe(404);
  });
});
