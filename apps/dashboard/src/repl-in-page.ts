import { newMessagePortRpcSession } from "capnweb";
import type { AnyHandle } from "iterate/react";
import { ItxError } from "iterate/errors";
import { PORT_MESSAGE, SANDBOX_PATH, type SandboxApi } from "./sandbox/protocol.ts";

// How long the sandbox may take to load and take its port before the run fails.
const SANDBOX_START_MS = 10_000;

/**
 * Runs `async (itx) => { ... }` in the page against the live handle, without eval in the page:
 * a fresh sandboxed iframe (opaque origin, its own CSP) evaluates the source, and reaches `itx`
 * over a MessagePort through Cap'n Web. Every call the script makes goes from the browser, over
 * the page's own session. The iframe is removed when the run settles. Decision 0020.
 */
export async function runInPage(itx: AnyHandle, source: string): Promise<unknown> {
  const frame = document.createElement("iframe");
  // allow-scripts alone: no allow-same-origin (so an opaque origin: no cookie, no parent DOM),
  // no forms, popups, top navigation or downloads.
  frame.setAttribute("sandbox", "allow-scripts");
  frame.hidden = true;
  frame.dataset.testid = "repl-sandbox";
  const loaded = new Promise<void>((resolve) => frame.addEventListener("load", () => resolve(), { once: true }));
  frame.src = SANDBOX_PATH;
  document.body.append(frame);
  const channel = new MessageChannel();
  let sandbox: ReturnType<typeof newMessagePortRpcSession<SandboxApi>> | undefined;
  try {
    await loaded;
    const target = frame.contentWindow;
    if (target === null) throw new ItxError("UNAVAILABLE", "the REPL sandbox did not load");
    // The sandbox gets its own reference to the handle: ending this session disposes the dup,
    // never the page's handle.
    sandbox = newMessagePortRpcSession<SandboxApi>(channel.port1, itx.dup());
    // "*": an opaque origin cannot be named. Only the frame this function created receives it,
    // and it carries nothing but the port; the page listens to no window message at all.
    target.postMessage({ type: PORT_MESSAGE }, "*", [channel.port2]);
    await withDeadline(sandbox.ready(), SANDBOX_START_MS);
    return await sandbox.run(source);
  } finally {
    sandbox?.[Symbol.dispose]();
    channel.port1.close();
    frame.remove();
  }
}

async function withDeadline<T>(promise: PromiseLike<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ItxError("UNAVAILABLE", `the REPL sandbox (${SANDBOX_PATH}) did not start within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
