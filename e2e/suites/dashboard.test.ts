import { afterAll, beforeAll, describe, expect } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser } from "../harness/browser.ts";
import { test } from "../harness/fixtures.ts";
import { scriptReply, startModelServer } from "../harness/model-server.ts";
import { target } from "../harness/os.ts";

declare global {
  interface Window {
    /** Every CSP violation the dashboard page caused since `openReplUnderStrictCsp` (set in the page). */
    violations: string[];
  }
}

// The dashboard in a real browser (headless Chromium) against the harness's OS: one signed-in
// page walks through what a person does, in order.
let browser: Browser;
let context: BrowserContext;
let page: Page;
let model: Awaited<ReturnType<typeof startModelServer>>;
const slug = `dash-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

beforeAll(async () => {
  browser = await launchBrowser();
  context = await browser.newContext();
  page = await context.newPage();
  // The first turn greets and returns a value (which starts a second turn); the second returns nothing, which ends the loop.
  model = await startModelServer((_request, index) =>
    index === 0
      ? scriptReply('async (itx) => { await itx.chat.sendMessage("Hello from the browser!"); return { greeted: true }; }')
      : scriptReply("async () => undefined"),
  );
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await model?.close();
});

async function open(hash: string): Promise<void> {
  await page.goto(`${target().baseUrl}/${hash}`);
}

/**
 * Checks the dashboard's CSP forbids eval, opens the REPL of this suite's project, and records every CSP
 * violation the page causes from then on in `window.violations` (the REPL must cause none).
 */
async function openReplUnderStrictCsp(): Promise<void> {
  const csp = (await fetch(`${target().baseUrl}/`)).headers.get("content-security-policy") ?? "";
  expect(csp).toContain("script-src 'self';");
  expect(csp).not.toContain("unsafe-eval");
  await open(`#/p/${slug}/repl`);
  await page.evaluate(() => {
    const violations: string[] = [];
    window.violations = violations;
    document.addEventListener("securitypolicyviolation", (event) => violations.push(`${event.violatedDirective} ${event.blockedURI}`));
  });
}

async function signInWith(kind: "admin-secret" | "bearer", value: string): Promise<void> {
  await page.selectOption("select", kind);
  await page.fill("input[name=secret]", value);
  await page.click("button[type=submit]");
  await page.waitForSelector("[data-testid=principal]");
}

describe("the dashboard in a real browser", () => {
  test("a wrong secret is refused with its code; the right one signs in with an httpOnly, SameSite cookie no script can read", async ({ os }) => {
    const { baseUrl, adminSecret } = os;
    await page.goto(baseUrl);
    await page.fill("input[name=secret]", "not-the-secret");
    await page.click("button[type=submit]");
    await expect.poll(() => page.textContent("[role=alert]")).toContain("UNAUTHENTICATED");

    await page.fill("input[name=secret]", adminSecret);
    await page.click("button[type=submit]");
    await page.waitForSelector("[data-testid=principal]");
    expect(await page.textContent("[data-testid=principal]")).toBe("admin");
    const cookies = await context.cookies();
    expect(cookies).toEqual([expect.objectContaining({ name: "iterate_session", httpOnly: true, sameSite: "Strict", path: "/" })]);
    expect(await page.evaluate(() => document.cookie)).toBe("");
    const pageText = await page.evaluate(() => document.documentElement.outerHTML + JSON.stringify({ ...localStorage }));
    expect(pageText).not.toContain(adminSecret);
  });

  test("creates a project from the projects page", async ({ admin: session }) => {
    await open("#/");
    await page.fill("input[name=slug]", slug);
    await page.click("text=Create project");
    await page.waitForSelector(`[data-testid=projects] a:text-is("${slug}")`);
    expect((await session.projects.list()).map((project) => project.slug)).toContain(slug);
  });

  test("the context tree shows the project's root context through __describe()", async () => {
    await open(`#/p/${slug}/context`);
    await page.waitForSelector("[data-testid=context]");
    const text = await page.textContent("[data-testid=context]");
    expect(text).toContain(":/");
    expect(text).toContain("agents");
  });

  test("the page's CSP forbids eval, and the REPL runs on the OS as itx.run: events stream in while it runs, then the result as a tree, errors with their code, history kept", async ({ admin: session }) => {
    await openReplUnderStrictCsp();

    await page.fill("textarea[name=code]", "async (itx) => { const me = await itx.whoami(); return { path: me.path, answer: 41 + 1 }; }");
    await page.click("button:text-is('Run')");
    await page.waitForSelector("[data-testid=repl-result][data-status=ok]");
    expect(await page.textContent("[data-testid=repl-result]")).toMatch(/path: *"\/".*answer: *42/s);

    // A script that appends, then waits for a word from Node: its append is on screen while it
    // still runs, so the page is watching, not waiting for the answer.
    await page.fill(
      "textarea[name=code]",
      'async (itx) => { const [mark] = await itx.append({ type: "repl/started", payload: {} }); const go = await itx.waitForEvent({ type: "repl/go", afterOffset: mark.offset, timeoutMs: 20000 }); return go.payload.word; }',
    );
    await page.click("button:text-is('Run')");
    await page.waitForSelector('[data-testid=repl-events] li[data-type="repl/started"]', { timeout: 15_000 });
    expect(await page.getAttribute("[data-testid=repl-result]", "data-status")).toBe("running");
    await session.projects.get(slug).append({ type: "repl/go", payload: { word: "streamed" } });
    await page.waitForSelector("[data-testid=repl-result][data-status=ok]", { timeout: 15_000 });
    expect(await page.textContent("[data-testid=repl-result]")).toContain('"streamed"');
    await page.waitForSelector('[data-testid=repl-events] li[data-type="events.iterate.com/itx/run-settled"]', { timeout: 10_000 });

    await page.fill("textarea[name=code]", 'async () => { throw new Error("boom"); }');
    await page.click("button:text-is('Run')");
    await page.waitForSelector("[data-testid=repl-result][data-status=failed]");
    expect(await page.textContent("[data-testid=repl-result]")).toContain("SCRIPT_FAILED");

    const history = await page.evaluate(() => JSON.parse(localStorage.getItem("iterate.repl.history") ?? "[]") as string[]);
    expect(history[0]).toContain("boom");
    expect(history).toHaveLength(3);
    expect(await page.evaluate(() => window.violations)).toEqual([]);
  });

  test("in-page mode runs the script in the browser against the page's live handle, through a sandboxed frame, while the page's CSP keeps forbidding eval", async ({ admin: session }) => {
    await openReplUnderStrictCsp();
    const runsBefore = (await session.projects.get(slug).getEvents({})).filter((event) => event.type === "events.iterate.com/itx/run-requested").length;

    await page.selectOption("select[name=mode]", "page");
    // `window` exists only in a browser: under itx.run this would answer "undefined".
    await page.fill("textarea[name=code]", "async (itx) => { const me = await itx.whoami(); return { path: me.path, principal: me.principal, where: typeof window }; }");
    await page.click("button:text-is('Run')");
    await page.waitForSelector("[data-testid=repl-result][data-status=ok]", { timeout: 15_000 });
    const answer = JSON.parse((await page.getAttribute("[data-testid=repl-result]", "data-json")) ?? "null");
    expect(answer).toEqual({ path: "/", principal: "admin", where: "object" });
    expect(await page.textContent("[data-testid=repl-result]")).toMatch(/path: *"\/"/);
    // It ran in the page: the OS saw calls, not a run.
    const runsAfter = (await session.projects.get(slug).getEvents({})).filter((event) => event.type === "events.iterate.com/itx/run-requested").length;
    expect(runsAfter).toBe(runsBefore);
    // The frame lives only as long as its run.
    expect(await page.$$("iframe")).toHaveLength(0);

    // Errors keep their code: the script's own throw, and one from the OS through the handle.
    await page.fill("textarea[name=code]", 'async () => { throw new Error("boom in the page"); }');
    await page.click("button:text-is('Run')");
    await page.waitForSelector("[data-testid=repl-result][data-status=failed]");
    expect(await page.textContent("[data-testid=repl-result]")).toMatch(/SCRIPT_FAILED.*boom in the page/);
    await page.fill("textarea[name=code]", "async (itx) => itx.append({ type: 42, payload: {} })");
    await page.click("button:text-is('Run')");
    await page.waitForSelector("[data-testid=repl-result][data-status=failed]");
    expect(await page.textContent("[data-testid=repl-result] [data-testid=error] code")).toBe("INVALID_ARGUMENT");
    await page.fill("textarea[name=code]", "not a function at all (");
    await page.click("button:text-is('Run')");
    await page.waitForSelector("[data-testid=repl-result][data-status=failed]");
    expect(await page.textContent("[data-testid=repl-result] [data-testid=error] code")).toBe("INVALID_ARGUMENT");

    expect(await page.evaluate(() => window.violations)).toEqual([]);
  });

  test("code run in the page reaches neither the cookie, the dashboard's DOM and storage, nor any origin, nor a popup or the top window", async ({ os }) => {
    await open(`#/p/${slug}/repl`);
    const requests: string[] = [];
    const onRequest = (request: { url(): string }) => requests.push(request.url());
    page.on("request", onRequest);
    try {
      await page.selectOption("select[name=mode]", "page");
      await page.fill(
        "textarea[name=code]",
        `async (itx) => {
  const attempt = async (what) => { try { return "allowed: " + String(await what()); } catch (error) { return "refused: " + error.name; } };
  return {
    origin: String(self.origin),
    cookie: await attempt(() => document.cookie),
    parentDom: await attempt(() => window.parent.document.title),
    storage: await attempt(() => localStorage.length),
    fetchOwnOrigin: await attempt(() => fetch("${os.baseUrl}/health").then((response) => response.status)),
    fetchRelative: await attempt(() => fetch("/health?from=sandbox").then((response) => response.status)),
    fetchElsewhere: await attempt(() => fetch("http://127.0.0.1:9/exfiltrate").then((response) => response.status)),
    popup: await attempt(() => window.open("http://127.0.0.1:9/popup")),
    navigateTop: await attempt(() => { window.top.location.href = "http://127.0.0.1:9/away"; return "asked"; }),
    stillWorks: (await itx.whoami()).principal,
  };
}`,
      );
      await page.click("button:text-is('Run')");
      await page.waitForSelector("[data-testid=repl-result][data-status=ok]", { timeout: 15_000 });
      const answer = JSON.parse((await page.getAttribute("[data-testid=repl-result]", "data-json")) ?? "null");
      expect(answer).toEqual({
        origin: "null",
        cookie: "refused: SecurityError",
        parentDom: "refused: SecurityError",
        storage: "refused: SecurityError",
        fetchOwnOrigin: "refused: TypeError",
        fetchRelative: "refused: TypeError",
        fetchElsewhere: "refused: TypeError",
        popup: "allowed: null",
        navigateTop: expect.stringMatching(/^refused: /),
        stillWorks: "admin",
      });
      // CSP stopped the fetches before they left: no request for them was made at all.
      expect(requests.filter((url) => url.includes("127.0.0.1:9/") || url.includes("/health"))).toEqual([]);
      // No popup opened and the dashboard stayed where it was.
      expect(context.pages()).toHaveLength(1);
      expect(page.url()).toBe(`${os.baseUrl}/#/p/${slug}/repl`);
    } finally {
      page.off("request", onRequest);
    }

    // Opened directly rather than framed, the sandbox page is still an opaque origin (its own
    // CSP sandboxes it), so it cannot read the session either.
    const direct = await context.newPage();
    try {
      await direct.goto(`${os.baseUrl}/repl-sandbox`);
      expect(
        await direct.evaluate(() => {
          try {
            return `${self.origin} ${document.cookie}`;
          } catch (error) {
            return `${self.origin} refused: ${(error as Error).name}`;
          }
        }),
      ).toBe("null refused: SecurityError");
    } finally {
      await direct.close();
    }
  });

  test("the stream viewer shows history, then events as they are appended, ephemeral ones too", async ({ admin: session }) => {
    const stream = session.projects.get(slug).streams.get("/feed");
    await stream.append({ type: "app/before", payload: { n: 1 } });
    await open(`#/p/${slug}/stream?path=/feed`);
    await page.waitForSelector('[data-testid=events] li[data-type="app/before"]');
    await page.waitForSelector("[data-testid=stream-status]:has-text('live')");
    await stream.append({ type: "app/after", payload: { n: 2 } });
    await page.waitForSelector('[data-testid=events] li[data-type="app/after"]', { timeout: 10_000 });
    await stream.append({ type: "app/tick", payload: { n: 3 }, ephemeral: true });
    await page.waitForSelector('[data-testid=events] li.ephemeral[data-type="app/tick"]', { timeout: 10_000 });
    // An append from the page reaches the page through the same subscription.
    await page.fill("input[name=type]", "app/from-page");
    await page.click("button:text-is('Append')");
    await page.waitForSelector('[data-testid=events] li[data-type="app/from-page"]', { timeout: 10_000 });
    const stored = await stream.getEvents({});
    expect(stored.map((event) => event.type)).toEqual(["app/before", "app/after", "app/from-page"]);
  });

  test("chats with an agent on the loopback model: the message, the script, what it said and the result", async () => {
    await open(`#/p/${slug}/agent?path=/agents/helper`);
    await page.click("text=Create this agent");
    await page.fill("input[name=baseUrl]", model.baseUrl);
    await page.fill("input[name=model]", "loopback");
    await page.click("button:text-is('Create')");
    await page.waitForSelector("[data-testid=agent-created]");
    await page.fill("input[name=message]", "Say hello, please");
    await page.click("button:text-is('Send')");
    await page.waitForSelector('[data-testid=conversation] [data-kind=agent]:has-text("Hello from the browser!")', { timeout: 30_000 });
    await page.waitForSelector("[data-testid=conversation] [data-kind=result]", { timeout: 30_000 });
    const kinds = await page.$$eval("[data-testid=conversation] [data-kind]", (items) => items.map((item) => item.getAttribute("data-kind")));
    expect(kinds.slice(0, 4)).toEqual(["user", "script", "agent", "result"]);
    expect(await page.textContent("[data-testid=conversation] [data-kind=script]")).toContain("itx.chat.sendMessage");
    expect(await page.textContent("[data-testid=conversation] [data-kind=result] >> nth=0")).toContain('{"greeted":true}');
    expect(model.requests.at(-1)?.messages.some((message) => message.content.includes("Say hello, please"))).toBe(true);
  });

  test("a sign-out in another tab shows this tab the sign-in form at once, with no click here", { timeout: 60_000 }, async ({ os }) => {
    await open("#/");
    await page.waitForSelector("[data-testid=principal]");
    const other = await context.newPage();
    try {
      await other.goto(`${os.baseUrl}/#/`);
      await other.click("button:text-is('Sign out')");
      await other.waitForSelector("input[name=secret]");
    } finally {
      await other.close();
    }
    // This page made no call: the OS closed its socket (4001) and the page saw the close.
    await page.waitForSelector("input[name=secret]", { timeout: 10_000 });
    expect(await page.textContent("[role=alert]")).toMatch(/Signed out: .*signed out/);
    await signInWith("admin-secret", os.adminSecret);
  });

  test("revoking the token a page signed in with shows the sign-in form at once", { timeout: 60_000 }, async ({ os, admin }) => {
    const issued = await admin.tokens.issue({ principal: "dash-viewer", projectIds: [slug], ttlSeconds: 600 });
    await open("#/");
    await page.click("button:text-is('Sign out')");
    await page.waitForSelector("input[name=secret]");
    await signInWith("bearer", issued.token);
    expect(await page.textContent("[data-testid=principal]")).toBe("dash-viewer");
    expect(await admin.tokens.revoke(issued.tokenId)).toEqual({ revoked: true });
    await page.waitForSelector("input[name=secret]", { timeout: 10_000 });
    expect(await page.textContent("[role=alert]")).toContain("the bearer token was revoked");
    // A reload does not bring it back: the session is refused at connect too.
    await page.reload();
    await page.waitForSelector("input[name=secret]");
    await signInWith("admin-secret", os.adminSecret);
  });

  test("sign-out ends the session: the page asks to sign in, and the old cookie no longer opens /api", async () => {
    const [old = expect.unreachable("the page holds no session cookie")] = await context.cookies();
    await open("#/");
    await page.click("button:text-is('Sign out')");
    await page.waitForSelector("input[name=secret]");
    expect(await context.cookies()).toEqual([]);
    // The old cookie, put back by hand, is refused: the session ended on the server.
    await context.addCookies([old]);
    await page.reload();
    await page.waitForSelector("input[name=secret]");
  });
});
