import { launchBrowser } from "@iterate/e2e/harness/browser";
import { report, reportTail, summarize } from "./stats.ts";
import { openProject, type BenchTarget } from "./target.ts";

const NAVIGATIONS = 12;
const LIVE_EVENTS = 30;

// Runs in the page before its own scripts: notes when the first event row and each later row
// appear (performance.now() counts from the navigation's start; the wall clock for appends).
const WATCH_ROWS = `
  window.__rows = { first: undefined, seen: {} };
  new MutationObserver(() => {
    for (const row of document.querySelectorAll("[data-testid=events] li[data-type]")) {
      const type = row.getAttribute("data-type");
      if (window.__rows.first === undefined) window.__rows.first = performance.now();
      if (!(type in window.__rows.seen)) window.__rows.seen[type] = performance.timeOrigin + performance.now();
    }
  }).observe(document, { childList: true, subtree: true });
`;

/**
 * The dashboard in headless Chromium: from navigation to the stream viewer until its first event
 * is on screen (page load, the cookie-authenticated /api session, the subscription's replay,
 * React's render), the first navigation (empty cache) apart from the rest; then an append from
 * Node until its row is rendered in the open page.
 */
export async function measureDashboard(target: BenchTarget): Promise<void> {
  const { projectId, itx } = await openProject(target, "bench-dashboard");
  const browser = await launchBrowser();
  try {
    const stream = itx.streams.get("/feed");
    await stream.append({ type: "bench/history", payload: { n: 0 } });
    const signIn = await fetch(`${target.baseUrl}/auth/sign-in`, {
      method: "POST",
      headers: { origin: target.baseUrl, "content-type": "application/json" },
      body: JSON.stringify({ credentials: { type: "admin-secret", secret: target.adminSecret } }),
    });
    const [name, value] = (signIn.headers.get("set-cookie") ?? "").split(";")[0]?.split("=") ?? [];
    const context = await browser.newContext();
    await context.addCookies([{ name: name ?? "", value: value ?? "", url: target.baseUrl }]);
    await context.addInitScript(WATCH_ROWS);
    const url = `${target.baseUrl}/#/p/${projectId}/stream?path=/feed`;
    const firstRow: number[] = [];
    for (let i = 0; i < NAVIGATIONS; i++) {
      const page = await context.newPage();
      await page.goto(url);
      await page.waitForSelector("[data-testid=events] li[data-type]");
      firstRow.push(await page.evaluate(() => (window as unknown as { __rows: { first: number } }).__rows.first));
      await page.close();
    }
    report("dashboard.navigation_to_first_event_rendered.empty_cache", firstRow[0] ?? Number.NaN, "ms");
    const navigations = summarize(firstRow.slice(1));
    report("dashboard.navigation_to_first_event_rendered.median", navigations.median, "ms");
    reportTail("dashboard.navigation_to_first_event_rendered", navigations);

    const page = await context.newPage();
    await page.goto(url);
    await page.waitForSelector("[data-testid=stream-status]:has-text('live')");
    const live: number[] = [];
    for (let i = 0; i < LIVE_EVENTS; i++) {
      const type = `bench/live-${i}`;
      const sent = performance.timeOrigin + performance.now();
      await stream.append({ type, payload: { i } });
      await page.waitForSelector(`[data-testid=events] li[data-type="${type}"]`);
      const shown = await page.evaluate((t) => (window as unknown as { __rows: { seen: Record<string, number> } }).__rows.seen[t] as number, type);
      live.push(shown - sent);
    }
    const summary = summarize(live);
    report("dashboard.live_append_to_row_rendered.median", summary.median, "ms");
    report("dashboard.live_append_to_row_rendered.p90", summary.p90, "ms");
    reportTail("dashboard.live_append_to_row_rendered", summary);
  } finally {
    await browser.close();
    itx[Symbol.dispose]();
  }
}
