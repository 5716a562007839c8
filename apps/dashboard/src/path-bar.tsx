import { useEffect, useState, type FormEvent } from "react";

/** A path field that commits on Enter (stream, context or agent path). */
export function PathBar({ label, value, onGo }: { label: string; value: string; onGo(path: string): void }) {
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [value]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onGo(draft.startsWith("/") ? draft : `/${draft}`);
  };
  return (
    <form className="row" onSubmit={submit}>
      <label className="muted">{label}</label>
      <input name="path" value={draft} onChange={(event) => setDraft(event.target.value)} />
      <button type="submit">Open</button>
    </form>
  );
}
