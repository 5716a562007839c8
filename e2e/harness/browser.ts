import chromium from "@sparticuz/chromium";
import { chromium as playwright, type Browser } from "playwright-core";

/**
 * Headless Chromium from the npm registry alone (@sparticuz/chromium ships the binary; the first
 * launch unpacks it to the temp folder, a few seconds). Pages get a real WebSocket, so the
 * dashboard's Cap'n Web client runs in them unchanged.
 */
export async function launchBrowser(): Promise<Browser> {
  return playwright.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true });
}
