import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { useItx } from "iterate/react";
import type { StreamEvent } from "iterate/types";
import { ErrorLine } from "./error-line.tsx";
import { ObjectTree } from "./object-tree.tsx";
import { loadHistory, remember } from "./repl-history.ts";
import { runInPage } from "./repl-in-page.ts";
import { watchContext, type Watch } from "./repl-watch.ts";

const STARTER = "async (itx) => {\n  return await itx.whoami();\n}";

/** Where the input runs: on the OS as `itx.run`, or in the page (a sandboxed iframe) against the live handle. */
type Mode = "os" | "page";

const MODE_NOTE: Record<Mode, string> = {
  os: "runs on the OS as itx.run, at this project's root context",
  page: "runs in this page (a sandboxed frame) against the live handle: each call is a round trip from the browser",
};

type Outcome = { status: "idle" } | { status: "running" } | { status: "ok"; value: unknown; ms: number } | { status: "failed"; error: unknown; ms: number };

/**
 * `async (itx) => { ... }` against the project's root context, in one of two modes. On the OS
 * (`itx.run`): the source goes to an isolate beside the context, under the OS's limits and jails.
 * In the page: a sandboxed iframe with its own CSP evaluates it and calls the page's live handle
 * over a MessagePort (`runInPage`). The page itself never evaluates it, so its
 * Content-Security-Policy needs no 'unsafe-eval' in either mode. While the script runs,
 * what happens on the context's stream (its own appends included) streams into the page; then
 * its result, or its error with the code. Ctrl/Cmd+Enter runs.
 */
export function Repl() {
  const itx = useItx();
  const [history, setHistory] = useState(loadHistory);
  const [code, setCode] = useState(() => history[0] ?? STARTER);
  const [mode, setMode] = useState<Mode>("os");
  const [outcome, setOutcome] = useState<Outcome>({ status: "idle" });
  const [events, setEvents] = useState<StreamEvent[]>([]);
  const watch = useRef<Watch | undefined>(undefined);
  useEffect(() => () => watch.current?.stop(), [itx]);
  const run = async () => {
    setHistory(remember(code));
    setOutcome({ status: "running" });
    setEvents([]);
    watch.current?.stop();
    const started = performance.now();
    try {
      // Watch first, so nothing the script appends falls before the subscription.
      watch.current = await watchContext(itx, (batch) => setEvents((previous) => [...previous, ...batch].slice(-200)));
      const value: unknown = mode === "os" ? await itx.run(code) : await runInPage(itx, code);
      setOutcome({ status: "ok", value, ms: performance.now() - started });
    } catch (error) {
      setOutcome({ status: "failed", error, ms: performance.now() - started });
    }
  };
  const onKey = (event: KeyboardEvent) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      void run();
    }
  };
  return (
    <section className="repl">
      <textarea name="code" spellCheck={false} value={code} onChange={(event) => setCode(event.target.value)} onKeyDown={onKey} rows={8} />
      <div className="row">
        <button type="button" onClick={() => void run()} disabled={outcome.status === "running"}>
          Run
        </button>
        <select name="mode" value={mode} onChange={(event) => setMode(event.target.value as Mode)} aria-label="where the script runs">
          <option value="os">on the OS (itx.run)</option>
          <option value="page">in this page</option>
        </select>
        <span className="muted small">{MODE_NOTE[mode]}</span>
        {"ms" in outcome && <span className="muted small">{outcome.ms.toFixed(0)} ms</span>}
      </div>
      {events.length > 0 && (
        <ol className="events" data-testid="repl-events">
          {events.map((event) => (
            <li key={`${event.offset}:${event.ephemeral ? `e${event.createdAt}${event.type}` : "d"}`} className={event.ephemeral ? "ephemeral" : ""} data-type={event.type}>
              <span className="offset">{event.ephemeral ? "~" : event.offset}</span>
              <span className="type">{event.type.replace("events.iterate.com/", "")}</span>
              <code className="payload">{JSON.stringify(event.payload)?.slice(0, 300)}</code>
              <span className="muted small">{event.source.origin}</span>
            </li>
          ))}
        </ol>
      )}
      <div data-testid="repl-result" data-status={outcome.status} data-json={outcome.status === "ok" ? asJson(outcome.value) : undefined}>
        {outcome.status === "running" && <p className="muted">Running…</p>}
        {outcome.status === "ok" && <ObjectTree value={outcome.value} />}
        {outcome.status === "failed" && <ErrorLine error={outcome.error} />}
      </div>
      {history.length > 0 && (
        <details className="history">
          <summary className="muted small">History ({history.length})</summary>
          <ul className="list">
            {history.map((entry) => (
              <li key={entry}>
                <button type="button" className="link" onClick={() => setCode(entry)}>
                  <code>{entry.length > 120 ? `${entry.slice(0, 120)}…` : entry}</code>
                </button>
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}

// The result as JSON text (what itx.run answered was JSON already), for copying and for tests.
function asJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
