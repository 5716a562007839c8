import chromium from "@sparticuz/chromium";
import { chromium as playwright, type Browser } from "playwright-core";

/**
 * Headless Chromium from the npm registry alone (@sparticuz/chromium ships the binary; the first
 * launch unpacks it to the temp folder, a few seconds). Pages get a real WebSocket, so the
 * dashboard's Cap'n Web client runs in them unchanged.
 */
export async function launchBrowser(): Promise<Browser> {
  return playwright.launch({ executablePath: await chromium.executablePath(), args: chromium.args.filter((arg) => !WEAKENING.has(arg)), headless: true });
}

// @sparticuz/chromium's default flags switch off the same-origin policy and allow mixed content
// (it targets scraping). The dashboard's tests must see the browser people use: with them, a
// sandboxed frame could read its parent's DOM and the tests of that boundary would lie.
const WEAKENING = new Set(["--disable-web-security", "--allow-running-insecure-content"]);
