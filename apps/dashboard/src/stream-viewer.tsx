import { useState, type FormEvent } from "react";
import { useItx, useStream } from "iterate/react";
import type { StreamEvent } from "iterate/types";
import { ErrorLine } from "./error-line.tsx";
import { PathBar } from "./path-bar.tsx";
import { navigate, type Route } from "./route.ts";

/** A stream's history, then every event as it arrives (ephemeral ones marked), newest last. */
export function StreamViewer({ route }: { route: Route & { page: "project" } }) {
  const path = route.path ?? "/";
  const { events, ready, error } = useStream(path, { live: true });
  return (
    <section>
      <PathBar label="Stream" value={path} onGo={(next) => navigate({ ...route, tab: "stream", path: next })} />
      <ErrorLine error={error} />
      <p className="muted small" data-testid="stream-status">
        {ready ? `live · ${events.length} events` : "reading history…"}
      </p>
      <ol className="events" data-testid="events">
        {events.map((event) => (
          <EventRow key={`${event.offset}:${event.ephemeral ? `e${event.createdAt}${event.type}` : "d"}`} event={event} />
        ))}
      </ol>
      <AppendForm path={path} />
    </section>
  );
}

function EventRow({ event }: { event: StreamEvent }) {
  return (
    <li className={event.ephemeral ? "ephemeral" : ""} data-type={event.type} data-offset={event.offset}>
      <span className="offset">{event.ephemeral ? "~" : event.offset}</span>
      <span className="type">{event.type.replace("events.iterate.com/", "")}</span>
      <code className="payload">{clip(JSON.stringify(event.payload) ?? "")}</code>
      <span className="muted small">{event.source.origin}</span>
    </li>
  );
}

function AppendForm({ path }: { path: string }) {
  const itx = useItx();
  const [type, setType] = useState("app/note");
  const [payload, setPayload] = useState('{ "text": "hello" }');
  const [ephemeral, setEphemeral] = useState(false);
  const [failure, setFailure] = useState<unknown>(undefined);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setFailure(undefined);
    try {
      await itx.streams.get(path).append({ type, payload: JSON.parse(payload) as unknown, ...(ephemeral ? { ephemeral: true } : {}) });
    } catch (error) {
      setFailure(error);
    }
  };
  return (
    <form className="row" onSubmit={(event) => void submit(event)}>
      <input name="type" value={type} onChange={(event) => setType(event.target.value)} />
      <input name="payload" className="grow" value={payload} onChange={(event) => setPayload(event.target.value)} />
      <label className="small">
        <input type="checkbox" checked={ephemeral} onChange={(event) => setEphemeral(event.target.checked)} /> ephemeral
      </label>
      <button type="submit">Append</button>
      <ErrorLine error={failure} />
    </form>
  );
}

function clip(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
