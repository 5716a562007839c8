import { useState, type KeyboardEvent } from "react";
import { ItxError } from "iterate/errors";
import { useItx } from "iterate/react";
import { ErrorLine } from "./error-line.tsx";
import { ObjectTree } from "./object-tree.tsx";
import { loadHistory, remember } from "./repl-history.ts";

const STARTER = "async (itx) => {\n  return await itx.whoami();\n}";

type Outcome = { status: "idle" } | { status: "running" } | { status: "ok"; value: unknown; ms: number } | { status: "failed"; error: unknown; ms: number };

/**
 * `async (itx) => { ... }` against the project. "In this page" calls it here with the live handle
 * (each call a round trip from the browser); "itx.run" sends the source to run in an isolate next
 * to the context. Ctrl/Cmd+Enter runs.
 */
export function Repl() {
  const itx = useItx();
  const [history, setHistory] = useState(loadHistory);
  const [code, setCode] = useState(() => history[0] ?? STARTER);
  const [where, setWhere] = useState<"page" | "run">("page");
  const [outcome, setOutcome] = useState<Outcome>({ status: "idle" });
  const run = async () => {
    setHistory(remember(code));
    setOutcome({ status: "running" });
    const started = performance.now();
    try {
      const value = where === "run" ? await itx.run(code) : await runInPage(code, itx);
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
        <label className="small">
          <input type="radio" name="where" checked={where === "page"} onChange={() => setWhere("page")} /> in this page
        </label>
        <label className="small">
          <input type="radio" name="where" checked={where === "run"} onChange={() => setWhere("run")} /> as itx.run
        </label>
        <button type="button" onClick={() => void run()} disabled={outcome.status === "running"}>
          Run
        </button>
        {"ms" in outcome && <span className="muted small">{outcome.ms.toFixed(0)} ms</span>}
      </div>
      <div data-testid="repl-result" data-status={outcome.status}>
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

// The page's own JavaScript: the script gets the same live handle the dashboard uses. It runs
// with the signed-in user's authority, which the page already has.
async function runInPage(code: string, itx: unknown): Promise<unknown> {
  let fn: unknown;
  try {
    fn = new Function(`"use strict"; return (${code}\n);`)();
  } catch (cause) {
    throw new ItxError("INVALID_ARGUMENT", `the script does not parse: ${(cause as Error).message}`, { cause });
  }
  if (typeof fn !== "function") throw new ItxError("INVALID_ARGUMENT", "the script must be a function: async (itx) => { ... }");
  return await (fn as (itx: unknown) => unknown)(itx);
}
