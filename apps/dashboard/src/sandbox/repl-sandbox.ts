import { RpcTarget, newMessagePortRpcSession } from "capnweb";
import { ItxError, errorCode, errorMessage } from "iterate/errors";
import { PORT_MESSAGE, type SandboxApi } from "./protocol.ts";

// Runs inside /repl-sandbox: an iframe with `sandbox="allow-scripts"` and no allow-same-origin,
// so its origin is opaque (no cookie, no storage, no access to the page's DOM), and a CSP of its
// own that allows eval here and nothing on the network (`connect-src 'none'`). The page hands it
// one MessagePort; over it the sandbox reaches the page's live handle, and nothing else.

class Sandbox extends RpcTarget implements SandboxApi {
  readonly #itx: () => unknown;

  constructor(itx: () => unknown) {
    super();
    this.#itx = itx;
  }

  ready(): true {
    return true;
  }

  async run(source: string): Promise<unknown> {
    let script: unknown;
    try {
      // The one eval of the dashboard, allowed by this page's CSP only (decision 0020).
      // oxlint-disable-next-line no-new-func -- evaluating the REPL's input is this page's purpose
      script = new Function(`"use strict"; return (${source}\n);`)();
    } catch (error) {
      throw new ItxError("INVALID_ARGUMENT", `the REPL's input does not parse: ${errorMessage(error)}`);
    }
    if (typeof script !== "function") throw new ItxError("INVALID_ARGUMENT", "the REPL takes a function: async (itx) => { ... }");
    try {
      return await (script as (itx: unknown) => unknown)(this.#itx());
    } catch (error) {
      // Coded errors (from the OS through the handle) keep their code; the script's own throws
      // are SCRIPT_FAILED, as they are under itx.run.
      if (errorCode(error) !== undefined) throw error;
      throw new ItxError("SCRIPT_FAILED", errorMessage(error));
    }
  }
}

// Only the first message from the embedding page that carries exactly one port is taken; then
// the sandbox stops listening, so nothing posted later (by the page or anyone) reaches it.
function takePort(event: MessageEvent): void {
  const data: unknown = event.data;
  if (event.source !== window.parent || event.ports.length !== 1) return;
  if (typeof data !== "object" || data === null || (data as { type?: unknown }).type !== PORT_MESSAGE) return;
  removeEventListener("message", takePort);
  let itx: unknown;
  itx = newMessagePortRpcSession(event.ports[0] as MessagePort, new Sandbox(() => itx));
}

addEventListener("message", takePort);
