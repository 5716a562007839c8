// What the dashboard page and its REPL sandbox (/repl-sandbox, a sandboxed iframe) say to each
// other. The only window message is the one that hands the sandbox its end of a MessageChannel;
// everything after runs as Cap'n Web over that port (decision 0020).

/** The path of the sandbox page: served with its own CSP, the only dashboard page that may eval. */
export const SANDBOX_PATH = "/repl-sandbox";

/** The window message that carries the sandbox's port (in `event.ports[0]`). */
export const PORT_MESSAGE = "iterate/repl-sandbox-port";

/** What the sandbox serves the page over the port. Its own remote main is the page's live handle. */
export interface SandboxApi {
  /** Answers once the sandbox holds its port: the page knows the session is up. */
  ready(): true;
  /** Evaluates `async (itx) => { ... }` and calls it with the page's handle; its result or error. */
  run(source: string): Promise<unknown>;
}
